"""strands-cli's network tools with the libraries it chose: `web_fetch` (httpx; markdown through markdownify) and
`duckduckgo_search` (ddgs). They run only when the run may use the network (a real provider or `--network`);
their results go through the durable tool path like any tool's. Imported only when a spec names them."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlparse

from strands import tool

DEFAULT_TIMEOUT_S = 10
MAX_TIMEOUT_S = 60  # a model-chosen `timeout` larger than this is cut to it: no call waits on a server longer
MAX_BODY_CHARS = 200_000
MAX_BODY_BYTES = 4 * MAX_BODY_CHARS  # read no more of a body than its first MAX_BODY_CHARS can take (UTF-8)
USER_AGENT = "strands-durable-web-fetch"
NOT_CONTENT = r"(?is)<script\b.*?</script\s*>|<style\b.*?</style\s*>|<noscript\b.*?</noscript\s*>"
"""The elements `mode="markdown"` drops, matched by RE2 in linear time: with Python's `re`, a page of unclosed
`<style` tags made the match quadratic (minutes for a 200,000-character page, and a C loop Ctrl+C cannot stop)."""


def _json_result(payload: dict[str, Any]) -> dict[str, Any]:
    return {"status": "success", "content": [{"json": payload}]}


def _unclosed_tags_as_text(html: str) -> str:
    """`html` with every `<` that no `>` follows before the next `<` written as `&lt;`: a tag never closed is text
    (what a browser shows), and Python's HTML parser, which markdownify uses, no longer rescans the rest of the page
    from each one (a page of 28,000 unclosed `<style` tags took it minutes)."""
    parts = html.split("<")
    return parts[0] + "".join(("<" if ">" in part else "&lt;") + part for part in parts[1:])


def _body_within(response: Any, deadline: float) -> bytes | None:
    """The first MAX_BODY_BYTES of a streamed response's body, or None when it is still arriving at `deadline` (the
    client's timeout bounds each read; this bounds them all: a server that sends a byte now and then cannot keep the
    run waiting, and one that sends gigabytes is not read to its end)."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= MAX_BODY_BYTES:
            break
        if time.monotonic() > deadline:
            return None
    return b"".join(chunks)[:MAX_BODY_BYTES]


@tool
def web_fetch(
    url: str, timeout: int = DEFAULT_TIMEOUT_S, headers: dict[str, str] | None = None, mode: str = "html"
) -> dict[str, Any]:
    """Fetch a static web page over HTTP/HTTPS; `mode` "markdown" converts the page to markdown.

    Args:
        url: The http or https URL to fetch.
        timeout: Request timeout in seconds.
        headers: Extra HTTP headers.
        mode: "html" (status, url, headers, body) or "markdown" (status, url, markdown).
    """
    import httpx

    parsed = urlparse(url.strip())
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError(f"Invalid URL: {url}. Only http and https are allowed.")
    if mode not in ("html", "markdown"):
        raise ValueError(f"Unsupported mode '{mode}'. Use 'html' or 'markdown'.")
    request_headers = {"User-Agent": USER_AGENT, "Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    request_headers.update({str(k): str(v) for k, v in (headers or {}).items()})
    limit_s = min(max(1, timeout), MAX_TIMEOUT_S)
    deadline = time.monotonic() + limit_s
    try:
        client = httpx.Client(timeout=limit_s, headers=request_headers, follow_redirects=True)
        with client, client.stream("GET", url.strip()) as response:
            raw = _body_within(response, deadline)
    except httpx.TimeoutException:
        raise ValueError(f"Request to {url} timed out after {limit_s} seconds.") from None
    except httpx.RequestError as exc:
        raise ValueError(f"Network error while fetching {url}: {exc}") from None
    if raw is None:
        raise ValueError(f"Request to {url} timed out after {limit_s} seconds (the body was still arriving).")
    body = raw.decode(response.encoding or "utf-8", errors="replace")[:MAX_BODY_CHARS]
    if mode == "html":
        return _json_result(
            {"status": response.status_code, "url": str(response.url), "headers": dict(response.headers), "body": body}
        )
    from markdownify import markdownify

    from strands_durable.runner.native_tools import linear_regex

    content = _unclosed_tags_as_text(linear_regex(NOT_CONTENT).sub("", body))
    markdown = markdownify(content, heading_style="ATX").strip()
    return _json_result({"status": response.status_code, "url": str(response.url), "markdown": markdown})


@tool
def duckduckgo_search(
    query: str, search_type: str = "text", max_results: int = 10, region: str = "us-en", safesearch: str = "moderate"
) -> dict[str, Any]:
    """Search the web through DuckDuckGo (and the other backends ddgs rotates through) for text results or news.

    Args:
        query: The search query.
        search_type: "text" or "news".
        max_results: How many results, 1 to 50.
        region: Region/language code such as us-en.
        safesearch: "on", "moderate" or "off".
    """
    if not query.strip():
        raise ValueError("No search query provided")
    if not 1 <= max_results <= 50:
        raise ValueError(f"max_results must be between 1 and 50, got: {max_results}")
    if search_type not in ("text", "news"):
        raise ValueError(f"Invalid search_type: {search_type}")
    try:
        from ddgs import DDGS
    except ImportError:
        raise ValueError("ddgs is not installed: pip install 'strands-durable[web]'") from None
    params = {"region": region, "safesearch": safesearch, "max_results": max_results, "backend": "auto"}
    with DDGS() as ddgs:
        results = list((ddgs.text if search_type == "text" else ddgs.news)(query.strip(), **params))
    return _json_result({"query": query, "search_type": search_type, "result_count": len(results), "results": results})
