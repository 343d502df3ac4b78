"""The URL splitter, the shared text helpers, dispatch and the cached entry points
(compiler/entities: url.py, dispatch.py, parse.py).

Activity frames §4.4: a capture row's URL is arbitrary address-bar text, so the splitter is total
(None, never a raise), reads host, port, path, query and fragment the way a browser does, and
drops credential-like query values and token-carrying fragments before any parser sees them.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator

import pytest

from compiler.entities import PageRef, dispatch, parse, registered_sites, url_report
from compiler.entities.url import (
    MAX_URL_CHARS,
    Url,
    _looks_like_bare_host,
    compute_site,
    is_number,
    parse_query,
    search_text,
    short_id,
    slug_words,
    split_url,
    tidy,
)

P = PageRef


@pytest.fixture(autouse=True)
def parsed_afresh() -> Iterator[None]:
    """`parse_url` and `site_of` remember each URL; each test reads its own, and leaves none of a
    patched parser's answers behind for the next."""
    parse.clear_caches()
    yield
    parse.clear_caches()


def _id(value: object) -> str | None:
    """A test id pytest reads back as it wrote it: URLs here hold brackets, escapes and `::`."""
    return re.sub(r"[^A-Za-z0-9./_-]+", "_", value)[:70] if isinstance(value, str) else None


def _parts(text: str) -> tuple[str, int | None, str, str, str] | None:
    url = split_url(text)
    return None if url is None else (url.host, url.port, url.path, url.query, url.fragment)


# ---- split_url -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("https://example.com/a/b?x=1#top", ("example.com", None, "/a/b", "x=1", "top")),
        ("  https://example.com/  ", ("example.com", None, "/", "", "")),
        ("HTTP://X.COM:80/", ("x.com", None, "/", "", "")),  # the scheme's own port is no port
        ("https://x.com:443/", ("x.com", None, "/", "", "")),
        ("http://x.com:443/", ("x.com", 443, "/", "", "")),
        ("https://x.com:8443/", ("x.com", 8443, "/", "", "")),
        ("https://x.com:65535/", ("x.com", 65535, "/", "", "")),
        ("https://x.com:65536/", ("x.com", None, "/", "", "")),
        ("https://x.com:0/", ("x.com", None, "/", "", "")),
        ("https://x.com:123456/", ("x.com", None, "/", "", "")),
        ("https://x.com:080/", ("x.com", 80, "/", "", "")),  # 80 on https is a real port
        ("https://x.com:\u0663/", ("x.com", None, "/", "", "")),  # an Arabic-Indic digit
        ("https://u:p@h.com:81/", ("h.com", 81, "/", "", "")),
        ("https://a@b@h.com/", ("h.com", None, "/", "", "")),
        ("https://[::1]:8080/x", ("[::1]", 8080, "/x", "", "")),
        ("https://[::1]x/", ("[::1]", None, "/", "", "")),
        ("https://[::1]/", ("[::1]", None, "/", "", "")),
        ("https://Example.COM./", ("example.com", None, "/", "", "")),
        ("https://a.com\\p\\x?y=1#f", ("a.com", None, "/p/x", "y=1", "f")),
        ("https://a.com/p?q=1\\x", ("a.com", None, "/p", "q=1/x", "")),
        ("https://a.com#f?x", ("a.com", None, "", "", "f?x")),
        ("https://a.com?x/y", ("a.com", None, "", "x/y", "")),
        ("a.com?x/y", ("a.com", None, "", "x/y", "")),
        ("a.com#f/x?z", ("a.com", None, "", "", "f/x?z")),
        ("//cdn.example.com/lib.js", ("cdn.example.com", None, "/lib.js", "", "")),
        ("localhost:3000/x", ("localhost", 3000, "/x", "", "")),
        ("example.com:8080/", ("example.com", 8080, "/", "", "")),
        ("github.com/acme", ("github.com", None, "/acme", "", "")),
        ("app.localhost/x", ("app.localhost", None, "/x", "", "")),
        ("10.0.0.1/admin", ("10.0.0.1", None, "/admin", "", "")),
    ],
    ids=_id,
)
def test_split_url_reads_host_port_path_query_and_fragment(
    text: str, parts: tuple[str, int | None, str, str, str]
) -> None:
    assert _parts(text) == parts


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "https:example.com/",  # a web scheme without its `//`
        "foo:123",  # a scheme-shaped word before digits is a scheme unless it has a dot
        "x:8080/",
        "localhost:x",
        "mailto:a@b.com",
        "https://",
        "https://[::1",
        "https://[]/",
        "https://exa mple.com/",
        "https://exa<mple.com/",
        "https://exa\x00mple.com/",
        "https://exa\u200bmple.com/",  # not printable
        "https://@/",
        "readme",
        "a@b.com/x",
    ],
    ids=_id,
)
def test_split_url_refuses_what_is_no_web_address(text: str) -> None:
    assert split_url(text) is None
    assert compute_site(text) is None


@pytest.mark.parametrize(
    ("text", "looks"),
    [
        ("github.com/acme", True),
        ("EXAMPLE.COM", True),
        ("example.com.", True),
        ("localhost", True),
        ("dev.localhost", True),
        ("1.2.3.4", True),
        ("x.io?q=1", True),
        ("x.io#f", True),
        ("x.io:3000", True),
        ("x.c", False),  # a one-letter top-level label is no host
        ("x.c0m", False),
        ("example", False),
        ("", False),
        (".", False),
        ("a@b.com", False),
        ("a b.com", False),
        ("a\u200b.com", False),
        ("notlocalhost", False),
    ],
    ids=_id,
)
def test_bare_host_detection(text: str, looks: bool) -> None:
    assert _looks_like_bare_host(text) is looks


# ---- Url ------------------------------------------------------------------------------------


def test_url_site_drops_a_leading_www_only() -> None:
    assert Url("www.example.com", None, "", "", "").site == "example.com"
    assert Url("www.", None, "", "", "").site == "www."
    assert Url("www2.example.com", None, "", "", "").site == "www2.example.com"
    assert Url("a.www.example.com", None, "", "", "").site == "a.www.example.com"


@pytest.mark.parametrize(
    ("fragment", "kept"),
    [
        ("inbox/FMfcg", "inbox/FMfcg"),
        ("access_token=abc&x=1", ""),
        ("x=1&token=abc", ""),
        ("/callback?code=1", ""),
        ("a;sig=1", ""),
        ("#state=1", ""),
        ("a/password=1", ""),
        ("TOKEN=abc", ""),  # names are matched case-insensitively
        ("mytoken=abc", "mytoken=abc"),  # a name is a whole name
        ("token", "token"),
        ("view/token/x", "view/token/x"),
    ],
    ids=_id,
)
def test_a_fragment_carrying_a_credential_is_dropped_whole(fragment: str, kept: str) -> None:
    assert Url("h.com", None, "", "", fragment).fragment == kept


def test_url_segments_are_decoded_and_empty_ones_skipped() -> None:
    url = Url("h.com", None, "//a//b%20c/%2F/", "", "")
    assert url.segments == ("a", "b c", "/")
    assert url.segments is url.segments  # split once


@pytest.mark.parametrize(
    ("index", "segment"),
    [(0, "a"), (2, "c"), (3, ""), (-1, "c"), (-3, "a"), (-4, "")],
)
def test_url_seg_reads_a_segment_or_empty(index: int, segment: str) -> None:
    assert Url("h.com", None, "/a/b/c", "", "").seg(index) == segment


def test_url_params_are_read_once_and_shared_with_param() -> None:
    url = Url("h.com", None, "", "Q=first&q=second&token=x", "")
    assert url.param("q") == "first"
    assert url.param("token") is None
    assert url.param("absent") is None
    assert url.params() == {"q": "first"}
    assert url.params() is url.params()
    fresh = Url("h.com", None, "", "a=1", "")
    assert fresh.params() == {"a": "1"}
    assert fresh.param("a") == "1"


@pytest.mark.parametrize(
    ("query", "params"),
    [
        ("", {}),
        ("a", {}),
        ("a=", {}),
        ("=x", {}),
        ("+=x", {}),
        ("a=1&a=2", {"a": "1"}),
        ("a=&a=2", {"a": "2"}),  # the first non-empty value
        ("A=1", {"a": "1"}),
        ("%41=1", {"a": "1"}),
        ("+b+=v", {"b": "v"}),
        ("q=a+b%20c", {"q": "a b c"}),
        ("q=a=b", {"q": "a=b"}),
        ("token=1&Key=2&X-Amz-Signature=3&q=ok", {"q": "ok"}),
    ],
    ids=_id,
)
def test_parse_query(query: str, params: dict[str, str]) -> None:
    assert parse_query(query) == params


# ---- text helpers ---------------------------------------------------------------------------


def test_tidy_makes_one_printable_line_within_the_limit() -> None:
    assert tidy("  a \n\t b  ") == "a b"
    assert tidy("a\x00b\u200bc") == "a b c"
    assert tidy("abc def", 4) == "abc"  # cut, then the cut's trailing space stripped
    assert tidy("abcd", 4) == "abcd"
    assert tidy("abcde", 4) == "abcd"
    assert tidy("x" * 121) == "x" * 120
    assert tidy("x" * 120) == "x" * 120


def test_search_text() -> None:
    assert search_text(None) is None
    assert search_text(" \t ") is None
    assert search_text("  red   shoes ") == "red shoes"
    assert search_text("w" * 101) == "w" * 100
    assert search_text("abcdef", 3) == "abc"


def test_short_id_keeps_short_ids_and_digests_long_ones() -> None:
    assert short_id("a" * 24) == "a" * 24
    assert short_id("a" * 25) == "h2e007fce5a71"
    assert short_id("abc", keep=3) == "abc"
    assert short_id("abc", keep=0) == short_id("abc", keep=2) != "abc"
    assert len(short_id("\ud800" * 30)) == 13  # a lone surrogate still digests


def test_slug_words_and_is_number() -> None:
    assert slug_words("how-to_do+x") == "how to do x"
    assert slug_words("--a__b++") == "a b"
    assert is_number("0123")
    assert not is_number("")
    assert not is_number("12a")
    assert not is_number("\u0661\u0662")  # digits, but not ASCII ones


# ---- dispatch -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("site", "module", "name"),
    [
        ("github.com", "code", "_github"),
        ("gist.github.com", "code", "_gist"),  # an exact host before its suffix
        ("acme.atlassian.net", "trackers", "_atlassian"),
        ("a.b.atlassian.net", "trackers", "_atlassian"),
        ("eu.console.aws.amazon.com", "cloud", "_aws_console"),
        ("x.en.wikipedia.org", "knowledge", "_wikipedia"),
        ("gitlab.acme.io", "code", "_gitlab_brand"),
        ("google.fr", "search", "_google_brand"),
        ("confluence.acme.co.uk", "documents", "_confluence_brand"),
    ],
    ids=_id,
)
def test_bespoke_parser_by_host_then_suffix_then_brand(site: str, module: str, name: str) -> None:
    parser = dispatch.bespoke_parser(site)
    assert parser is not None
    assert (parser.__module__, parser.__name__) == (f"compiler.entities.{module}", name)


@pytest.mark.parametrize(
    "site", ["gitlab", "google", "example.com", "atlassian.net.x", ""], ids=_id
)
def test_no_bespoke_parser(site: str) -> None:
    assert dispatch.bespoke_parser(site) is None


def test_a_host_claimed_by_two_families_is_refused_at_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def parser(url: Url) -> PageRef | None:
        return None

    first = types.ModuleType("first")
    first.HOSTS = {"a.com": parser}  # type: ignore[attr-defined]
    second = types.ModuleType("second")
    second.HOSTS = {"b.com": parser, "a.com": parser}  # type: ignore[attr-defined]
    monkeypatch.setattr(dispatch, "FAMILIES", (first, second))
    with pytest.raises(RuntimeError) as raised:
        dispatch._merge("HOSTS")
    assert str(raised.value) == (
        "second.HOSTS registers 'a.com', which another site family already claims; "
        "give each host to exactly one parser"
    )
    monkeypatch.setattr(dispatch, "FAMILIES", (first, types.ModuleType("empty")))
    assert dispatch._merge("HOSTS") == {"a.com": parser}
    assert dispatch._merge("BRANDS") == {}


def test_registered_sites_name_hosts_suffix_and_brand_families() -> None:
    sites = registered_sites()
    assert sites == sorted(sites) == dispatch.registered_sites()
    assert {"github.com", "*.slack.com", "gitlab.*", "google.*", "*.sharepoint.com"} <= set(sites)
    assert "slack.com" not in sites and "gitlab" not in sites
    assert len(sites) == len(dispatch.HOSTS) + len(dispatch.SUFFIXES) + len(dispatch.BRANDS)


def test_resolve_caps_a_bespoke_entity_and_falls_through_when_it_is_blank() -> None:
    long_path = "/".join(["segment"] * 30)
    ref = dispatch.compute(f"https://github.com/acme/app/blob/main/{long_path}")
    assert ref is not None and ref.kind == "github_file"
    assert ref.entity == f"acme/app:{long_path}"[:120]
    # A user name that is only a space tidies to nothing: the generic layers decide instead.
    assert dispatch.compute("https://github.com/%20") == P("page", "github.com")
    assert dispatch.compute("https://github.com/%20?q=typed+words") == P("search", "typed words")


def test_resolve_caps_a_generic_entity() -> None:
    account = "@" + "a" * 200
    ref = dispatch.compute(f"https://social.example.org/{account}/123456")
    assert ref == P("mastodon_post", f"{account}@social.example.org/123456"[:120])


def test_resolve_keeps_an_entity_that_needs_no_tidying_as_it_is() -> None:
    url = split_url("https://github.com/acme/app/pull/12")
    assert url is not None
    assert dispatch.resolve(url) == P("github_pr", "acme/app#12")
    assert dispatch.compute("about:blank") is None


# ---- parse ----------------------------------------------------------------------------------


def test_parse_url_and_site_of_take_text_only() -> None:
    assert parse.parse_url(42) is None  # type: ignore[arg-type]
    assert parse.site_of(b"https://x.com/") is None  # type: ignore[arg-type]
    assert parse.parse_url("") is None and parse.site_of("") is None


def test_parse_url_and_site_of_read_the_first_max_url_chars() -> None:
    head = "https://github.com/acme/"
    repo = "r" * (MAX_URL_CHARS - len(head))
    assert parse.parse_url(head + repo + "TAIL") == P("github_repo", f"acme/{repo}"[:120])
    assert parse.site_of("https://" + "a" * MAX_URL_CHARS + ".com/") == "a" * (MAX_URL_CHARS - 8)


def test_a_parser_that_raises_costs_the_row_its_entity_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(text: str) -> PageRef | None:
        raise ValueError(text)

    monkeypatch.setattr(dispatch, "compute", broken)
    assert parse.parse_url("https://github.com/acme/app/pull/12") == P("page", "github.com")
    assert parse.parse_url("not a url") is None


def test_a_site_reader_that_raises_gives_no_site(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(text: str) -> str | None:
        raise ValueError(text)

    monkeypatch.setattr(parse, "compute_site", broken)
    assert parse.site_of("https://github.com/acme") is None


def test_the_entry_points_remember_each_url_until_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    url = "https://github.com/acme/app/pull/12"
    assert parse.parse_url(url) == P("github_pr", "acme/app#12")
    assert parse.site_of(url) == "github.com"
    monkeypatch.setattr(dispatch, "compute", lambda text: P("page", "cached?"))
    monkeypatch.setattr(parse, "compute_site", lambda text: "cached?")
    assert parse.parse_url(url) == P("github_pr", "acme/app#12")
    assert parse.site_of(url) == "github.com"
    parse.clear_caches()
    assert parse.parse_url(url) == P("page", "cached?")
    assert parse.site_of(url) == "cached?"


def test_resolve_returns_a_parsers_reference_itself_when_it_needs_no_tidying(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bespoke = P("example_item", "item 1")
    monkeypatch.setitem(dispatch.HOSTS, "example.test", lambda url: bespoke)
    url = split_url("https://example.test/x")
    assert url is not None
    assert dispatch.resolve(url) is bespoke
    surfaced = P("search", "typed words")
    monkeypatch.setattr(dispatch.generic, "search_query", lambda url: surfaced)
    other = split_url("https://example.org/?q=typed+words")
    assert other is not None
    assert dispatch.resolve(other) is surfaced


def test_parse_url_and_site_of_ignore_what_lies_past_max_url_chars() -> None:
    padded = "https://example.com/?pad=" + "y" * MAX_URL_CHARS + "&q=hello"
    assert parse.parse_url(padded) == P("page", "example.com")
    assert parse.parse_url("https://example.com/?q=hello") == P("search", "hello")
    assert parse.site_of(" " * MAX_URL_CHARS + "https://example.com/") is None
    assert parse.parse_url(" " * MAX_URL_CHARS + "https://example.com/") is None


def test_url_report_counts_typed_generic_and_not_web_apart() -> None:
    report = url_report(
        [
            "https://github.com/acme/app/pull/1",
            "https://github.com/acme/app/pull/2",
            "https://youtu.be/v",
            "https://x.com/a",
            "https://en.wikipedia.org/wiki/X",
            "https://vimeo.com/1",
            "https://www.google.com/search?q=x",
            "https://example.com/a",
            "about:blank",
            "mailto:a@b.c",
            "   ",
            "",
        ]
    )
    assert report == {
        "total": 10,
        "not_web": 2,
        "typed": 7,
        "generic": 1,
        "typed_fraction": 0.7,
        "kinds": {
            "github_pr": 2,
            "page": 1,
            "search": 1,
            "vimeo_video": 1,
            "wikipedia_article": 1,
            "x_profile": 1,
            "youtube_video": 1,
        },
    }
    assert list(report["kinds"]) == [
        "github_pr",
        "page",
        "search",
        "vimeo_video",
        "wikipedia_article",
        "x_profile",
        "youtube_video",
    ]
