"""Cloud dashboards: AWS console (`service/region`), Google Cloud console (`service/project`),
Azure portal (resource or blade, read from the fragment), Vercel, Netlify, Heroku, Cloudflare,
Fly.io, Render, DigitalOcean, Supabase.

Account and subscription ids are dropped: an entity names the service and the resource.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from .knowledge import docs_page
from .ref import PageRef
from .url import Parser, Url, is_number

_AWS_REGION = re.compile(r"[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}")
_GCP_PROJECT = re.compile(r"[a-z][a-z0-9\-]{1,62}")


def _aws_console(url: Url) -> PageRef | None:
    seg = url.segments
    service = seg[0].lower() if seg else ""
    if not service or service in ("console", "home"):
        service = "home"
    region = url.param("region") or ""
    if not _AWS_REGION.fullmatch(region):
        label = url.site.partition(".")[0]
        region = label if _AWS_REGION.fullmatch(label) else ""
    return PageRef("aws_console", f"{service}/{region}" if region else service)


def _aws_signin(url: Url) -> PageRef | None:
    return PageRef("signin", url.site)


def _gcp_console(url: Url) -> PageRef | None:
    seg = url.segments
    service = seg[0] if seg else "home"
    if service in ("welcome", "home") or not service:
        service = "home"
    project = url.param("project") or ""
    if not _GCP_PROJECT.fullmatch(project):
        project = ""
    return PageRef("gcp_console", f"{service}/{project}" if project else service)


def _azure_portal(url: Url) -> PageRef | None:
    parts = [unquote(part) for part in url.fragment.split("/") if part]
    if parts and parts[0].startswith("@"):
        parts = parts[1:]  # the tenant (`@contoso.onmicrosoft.com`)
    if not parts:
        return PageRef("dashboard", url.site)
    lowered = [part.lower() for part in parts]
    if parts[0] == "resource" and "providers" in lowered:
        index = lowered.index("providers")
        group = ""
        if "resourcegroups" in lowered:
            group_index = lowered.index("resourcegroups") + 1
            group = parts[group_index] if group_index < len(parts) else ""
        provider = parts[index + 1 : index + 4]
        if len(provider) == 3:
            name = provider[2]
            return PageRef("azure_resource", f"{group}/{name}" if group else name)
    if parts[0] in ("view", "blade") and len(parts) >= 2:
        return PageRef("azure_portal", parts[1])
    if parts[0] == "browse" and len(parts) >= 2:
        return PageRef("azure_portal", "browse " + "/".join(parts[1:3]))
    return PageRef("azure_portal", parts[0][:60])


_VERCEL_RESERVED = frozenset(
    {
        "account",
        "blog",
        "changelog",
        "contact",
        "customers",
        "dashboard",
        "enterprise",
        "guides",
        "integrations",
        "login",
        "marketplace",
        "new",
        "pricing",
        "signup",
        "solutions",
        "templates",
    }
)


def _vercel(url: Url) -> PageRef | None:
    seg = url.segments
    if not seg:
        return None
    if seg[0] == "docs":
        return docs_page(url)
    if seg[0] in _VERCEL_RESERVED or seg[0].startswith("~"):
        return None
    if len(seg) >= 2:
        return PageRef("vercel_project", f"{seg[0]}/{seg[1]}")
    return PageRef("vercel_team", seg[0])


def _netlify(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] in ("sites", "projects"):
        return PageRef("netlify_site", seg[1])
    if len(seg) >= 2 and seg[0] == "teams":
        return PageRef("netlify_team", seg[1])
    return PageRef("dashboard", url.site)


def _heroku(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "apps":
        return PageRef("heroku_app", seg[1])
    if len(seg) >= 2 and seg[0] == "pipelines":
        return PageRef("heroku_pipeline", seg[1])
    return PageRef("dashboard", url.site)


def _cloudflare(url: Url) -> PageRef | None:
    seg = url.segments
    # `/<account id>/<zone>/dns`: the zone is a domain name; the account id is dropped.
    if len(seg) >= 2 and "." in seg[1]:
        return PageRef("cloudflare_zone", seg[1].lower())
    return PageRef("dashboard", url.site)


def _fly(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "apps":
        return PageRef("fly_app", seg[1])
    if seg[:1] == ("docs",):
        return docs_page(url)
    if seg[:1] == ("dashboard",):
        return PageRef("dashboard", url.site)
    return None


def _render(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] in ("web", "worker", "static", "cron", "d", "project"):
        return PageRef("render_service", seg[1])
    return PageRef("dashboard", url.site)


def _digitalocean(url: Url) -> PageRef | None:
    seg = url.segments
    if len(seg) >= 2 and seg[0] == "droplets" and is_number(seg[1]):
        return PageRef("digitalocean_droplet", seg[1])
    if len(seg) >= 2 and seg[0] == "apps":
        return PageRef("digitalocean_app", seg[1])
    return PageRef("dashboard", url.site)


def _supabase(url: Url) -> PageRef | None:
    seg = url.segments
    if seg[:2] == ("dashboard", "project") and len(seg) >= 3:
        return PageRef("supabase_project", seg[2])
    if seg[:1] == ("docs",):
        return docs_page(url)
    return None


HOSTS: dict[str, Parser] = {
    "console.aws.amazon.com": _aws_console,
    "console.cloud.google.com": _gcp_console,
    "portal.azure.com": _azure_portal,
    "vercel.com": _vercel,
    "app.netlify.com": _netlify,
    "dashboard.heroku.com": _heroku,
    "dash.cloudflare.com": _cloudflare,
    "fly.io": _fly,
    "dashboard.render.com": _render,
    "cloud.digitalocean.com": _digitalocean,
    "supabase.com": _supabase,
}
SUFFIXES: dict[str, Parser] = {
    "console.aws.amazon.com": _aws_console,
    "signin.aws.amazon.com": _aws_signin,
}
