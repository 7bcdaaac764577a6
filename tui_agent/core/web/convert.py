"""A fetched body as the model reads it: HTML as Markdown (the page's main content: its
``<main>``, ``role="main"`` or ``<article>``, without navigation, headers, footers,
sidebars, scripts and forms; headings, code blocks with their language, links and tables
kept), as plain text, or as it came; JSON and text as they are; PDF as text when pypdf is
installed; other binaries refused with their type.

markdownify (on BeautifulSoup with the standard library's parser) does the conversion: it
was compared with trafilatura and html2text on the saved pages in tests/fixtures/web/
(README "Web"); both are imported on the first HTML page, not at start.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

FORMATS = ("markdown", "text", "html")
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "text/")
CHROME = (
    "script", "style", "noscript", "template", "nav", "header", "footer", "aside", "form",
    "button", "iframe", "svg", "canvas", "dialog", "select", "input", "object", "embed",
)  # fmt: skip
HEADINGS = ["h1", "h2", "h3", "h4", "h5", "h6"]
MAIN = ("main", "[role=main]", "article", "#main-content", "#content", ".body", "body")
ANCHOR_MARKS = {"¶", "§", "#", "🔗", ""}
PDF_HINT = "pip install 'tui-agent[pdf]'"


class Unreadable(Exception):
    """A body fetch does not turn into text (an image, an archive…), with its type."""


@dataclass
class Converted:
    text: str
    title: str = ""
    kind: str = ""  # html, json, text, pdf


def sniff(content_type: str, body: bytes) -> str:
    """The media type, from the header or, without one, from the first bytes."""
    if content_type and content_type != "application/octet-stream":
        return content_type
    head = body[:512].lstrip().lower()
    if head.startswith(b"%pdf-"):
        return "application/pdf"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head:
        return "text/html"
    if head[:1] in (b"{", b"["):
        return "application/json"
    if body and b"\0" not in body[:8192]:
        try:
            body[:8192].decode("utf-8")
            return "text/plain"
        except UnicodeDecodeError:
            pass
    return content_type or "application/octet-stream"


def decode(body: bytes, charset: str | None) -> str:
    for name in (charset, "utf-8"):
        if name:
            try:
                return body.decode(name)
            except (LookupError, UnicodeDecodeError):
                continue
    return body.decode("utf-8", errors="replace")


def convert(
    body: bytes, content_type: str, charset: str | None, fmt: str, base: str = ""
) -> Converted:
    """``base``: the page's URL, against which its links are made absolute (so the model
    can fetch them)."""
    kind = sniff(content_type, body)
    if kind in HTML_TYPES or kind.endswith("+html"):
        return _html(body, charset, fmt, base)
    if kind == "application/pdf":
        return _pdf(body)
    if kind.startswith(TEXT_TYPES) or kind.endswith(("+json", "+xml")):
        text = decode(body, charset)
        return Converted(text, kind="json" if "json" in kind else "text")
    raise Unreadable(
        f"a binary file ({kind}, {len(body)} bytes): fetch reads web pages, text, JSON and PDF"
    )


def _pdf(body: bytes) -> Converted:
    try:
        import pypdf
    except ImportError:
        raise Unreadable(
            f"a PDF ({len(body)} bytes): reading PDFs needs pypdf ({PDF_HINT})"
        ) from None
    import io

    try:
        reader = pypdf.PdfReader(io.BytesIO(body))
        pages = [page.extract_text() or "" for page in reader.pages]
        title = str(reader.metadata.get("/Title") or "") if reader.metadata else ""
    except Exception as exc:  # a damaged or encrypted PDF
        raise Unreadable(f"a PDF that could not be read ({type(exc).__name__}: {exc})") from None
    text = "\n\n".join(f"<!-- page {n} -->\n{p.strip()}" for n, p in enumerate(pages, 1))
    return Converted(text, title, "pdf")


def _html(body: bytes, charset: str | None, fmt: str, base: str) -> Converted:
    if fmt == "html":
        return Converted(decode(body, charset), kind="html")
    from urllib.parse import urljoin

    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    main = main_content(soup)
    if base:
        for link in main.find_all("a", href=True):
            href = str(link["href"])
            if not href.startswith("#"):
                link["href"] = urljoin(base, href)
    if fmt == "text":
        text = main.get_text("\n", strip=True)
        return Converted(text, title, "html")
    return Converted(to_markdown(main), title, "html")


def main_content(soup: Any) -> Any:
    """The page's main content: the first landmark with some text in it, with the page's
    chrome (navigation, headers, footers, sidebars, scripts) taken out."""
    for tag in soup(list(CHROME)):
        tag.decompose()
    for tag in soup.select("[role=navigation], [role=banner], [role=contentinfo], [hidden]"):
        tag.decompose()
    for link in soup.find_all("a", href=True):  # a heading's "¶" permalink
        if str(link["href"]).startswith("#") and link.get_text(strip=True) in ANCHOR_MARKS:
            link.decompose()
        elif str(link["href"]).startswith("#") and link.find_parent(HEADINGS) is not None:
            link.unwrap()  # mdBook's heading that links to itself
    for selector in MAIN:
        node = soup.select_one(selector)
        if node is not None and len(node.get_text(strip=True)) >= 200:
            return node
    return soup.body or soup


_LANGUAGE = re.compile(r"^(?:language|lang|highlight|sourceCode)-([\w+#.-]+)$")


def _language(pre: Any) -> str:
    """A code block's language, from the classes docs generators put on it or its parent
    (``language-js``, ``highlight-python3``, ``rust``)."""
    for node in (pre.find("code"), pre, pre.parent):
        if node is None:
            continue
        for name in node.get("class") or []:
            match = _LANGUAGE.match(name)
            if match and match.group(1) not in ("default", "none", "text"):
                return match.group(1)
    return ""


def to_markdown(node: Any) -> str:
    from markdownify import MarkdownConverter

    converter = MarkdownConverter(
        heading_style="ATX", bullets="-", code_language_callback=_language, escape_misc=False
    )
    text = converter.convert_soup(node)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def as_json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
