"""Sessions on S3 (any S3-compatible server): conditional-write commits, checkpoints and fenced leases.

boto3 is imported only when a client is built (`pip install 'strands-durable[s3]'`).
"""

from strands_durable.store.s3.client import Objects, make_client
from strands_durable.store.s3.session import S3Session
from strands_durable.store.s3.store import S3Store, parse_url

# Objects and make_client: the bucket client the S3 artifact sink (runner/s3_artifacts.py) writes through
__all__ = ["Objects", "S3Session", "S3Store", "make_client", "parse_url"]
