"""Sessions on S3 (any S3-compatible server): conditional-write commits, checkpoints and fenced leases.

boto3 is imported only when a client is built (`pip install 'strands-durable[s3]'`).
"""

from strands_durable.store.s3.outputs import S3Output
from strands_durable.store.s3.session import S3Session
from strands_durable.store.s3.store import S3Store, parse_url

__all__ = ["S3Output", "S3Session", "S3Store", "parse_url"]
