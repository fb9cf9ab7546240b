"""A planted bug the lockstep tests share: a session that holds its lease through its first two commits, then lets
it go (it never checks the lease between commits again). Only tests use it."""

from __future__ import annotations

from typing import Any


def let_the_lease_go_after_two_commits(session: Any) -> None:
    """Wrap `session.commit` so that the session's lease is released right after its second commit."""
    commit, count = session.commit, [0]

    def counting(*args: Any, **kwargs: Any) -> Any:
        result = commit(*args, **kwargs)
        count[0] += 1
        if count[0] == 2:
            session._lease.release()
        return result

    session.commit = counting
