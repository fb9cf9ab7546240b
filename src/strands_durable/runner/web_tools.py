"""strands-cli's network tools with the libraries it chose: `web_fetch` (httpx; markdown through markdownify) and
`duckduckgo_search` (ddgs). They run only when the run may use the network (a real provider or `--network`);
their results go through the durable tool path like any tool's. Imported only when a spec names them."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlparse

from strands import tool

DEFAULT_TIMEOUT_S = 10
MAX_BODY_CHARS = 200_000
USER_AGENT = "strands-durable-web-fetch"
_NOT_CONTENT = re.compile(r"<(script|style|noscript)\b.*?</\1\s*>", re.IGNORECASE | re.DOTALL)


def _json_result(payload: dict[str, Any]) -> dict[str, Any]:
    return {"status": "success", "content": [{"json": payload}]}


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
    try:
        with httpx.Client(timeout=max(1, timeout), headers=request_headers, follow_redirects=True) as client:
            response = client.get(url.strip())
    except httpx.TimeoutException:
        raise ValueError(f"Request to {url} timed out after {timeout} seconds.") from None
    except httpx.RequestError as exc:
        raise ValueError(f"Network error while fetching {url}: {exc}") from None
    body = response.text[:MAX_BODY_CHARS]
    if mode == "html":
        return _json_result(
            {"status": response.status_code, "url": str(response.url), "headers": dict(response.headers), "body": body}
        )
    from markdownify import markdownify

    markdown = markdownify(_NOT_CONTENT.sub("", body), heading_style="ATX").strip()
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
