"""`python -m strands_durable` runs the `strands` command line."""

from strands_durable.cli.app import main

if __name__ == "__main__":
    main()
