"""The servers `.ci/run` installs and the scorecard starts answer their own protocols on loopback."""

from __future__ import annotations

import socket
import subprocess

from bench.scorecard.servers import ENV_DYNAMODB, ENV_POSTGRES, ENV_REDIS, ENV_S3_BUCKET, postgres_bin_dir


def test_redis_server_is_debian_7_0_and_keeps_a_value(redis_server):
    host_port = redis_server.env[ENV_REDIS].split("//")[1].split("/")[0]
    host, port = host_port.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"*3\r\n$3\r\nSET\r\n$9\r\nscorecard\r\n$2\r\nok\r\n*2\r\n$3\r\nGET\r\n$9\r\nscorecard\r\n")
        reply = b""
        while not reply.endswith(b"ok\r\n"):
            chunk = conn.recv(100)
            assert chunk, f"redis closed the connection after {reply!r}"
            reply += chunk
    assert reply == b"+OK\r\n$2\r\nok\r\n"
    assert redis_server.version.startswith("redis 7.0.")


def test_postgresql_server_is_15_and_answers_sql(postgresql_server):
    url = postgresql_server.env[ENV_POSTGRES]
    psql = postgres_bin_dir().parent / "bin" / "psql"
    done = subprocess.run([str(psql), url, "-tAc", "SHOW server_version"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith("15.")
    assert postgresql_server.version.startswith("PostgreSQL 15.")


def test_dynamodb_server_keeps_an_item(dynamodb_server):
    import boto3

    client = boto3.client(
        "dynamodb",
        endpoint_url=dynamodb_server.env[ENV_DYNAMODB],
        region_name="us-east-1",
        aws_access_key_id="scorecard",
        aws_secret_access_key="scorecard",
    )
    client.create_table(
        TableName="scorecard-probe",
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName="scorecard-probe", Item={"PK": {"S": "a"}, "v": {"S": "1"}})
    item = client.get_item(TableName="scorecard-probe", Key={"PK": {"S": "a"}})["Item"]
    assert item == {"PK": {"S": "a"}, "v": {"S": "1"}}


def test_s3_server_has_the_scorecard_bucket(s3_server):
    from strands_durable.store.s3.client import make_client

    env = s3_server.env
    client = make_client(env["AWS_ENDPOINT_URL_S3"], env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"])
    client.put_object(Bucket=env[ENV_S3_BUCKET], Key="probe", Body=b"ok")
    assert client.get_object(Bucket=env[ENV_S3_BUCKET], Key="probe")["Body"].read() == b"ok"
