"""The one settings module of Aframes: every value comes from the environment.

With nothing configured it runs embedded: SQLite in WAL mode and a filesystem Celery broker,
both under ``var/``, with a secret key generated there on first start.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from kombu import Queue

from aframes_web.env import ConfigError, env_bool, env_int, env_list, env_rate, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("AFRAMES_VAR_DIR") or BASE_DIR / "var")
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    configured = env_str("SECRET_KEY")
    if configured:
        return configured
    if not DEBUG and env_str("DATABASE_URL"):
        # A configured database means a real deployment: a key that silently lives in a local
        # file would change with every container and log everyone out.
        raise ConfigError("SECRET_KEY must be set when DEBUG is off and DATABASE_URL is set.")
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from our static files (no CDN)
    "django_htmx",
    "template_partials",
    "aframes_web.teams",
    "aframes_web.streams",
    "aframes_web.activity",
    "memory",
    "aframes_web.pipeline",
    "aframes_web.proactivestream",
    "aframes_web.annotation",
    "aframes_web.reconcile",
    "aframes_web.qa",
    "aframes_web.api",
    "aframes_web.mcp.apps.McpConfig",
    "aframes_web.dashboard",
    "axes",  # login lockout after repeated failures (AXES_* below)
    "csp",  # Content-Security-Policy (CONTENT_SECURITY_POLICY below)
]

MIDDLEWARE = [
    "aframes_web.health.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into its answer.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "aframes_web.urls"
WSGI_APPLICATION = "aframes_web.wsgi.application"
ASGI_APPLICATION = "aframes_web.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------------
_database_url = env_str("DATABASE_URL")
if _database_url:
    try:
        _db = dj_database_url.parse(_database_url, conn_max_age=60, conn_health_checks=True)
    except Exception as exc:  # dj-database-url raises several types for malformed URLs
        raise ConfigError(
            f"DATABASE_URL is not a usable database URL ({exc}); "
            "expected e.g. postgres://user@host:5432/name or sqlite:////abs/path.db"
        ) from None
    if _db.get("ENGINE") not in (
        "django.db.backends.postgresql",
        "django.db.backends.sqlite3",
    ):
        raise ConfigError(
            f"DATABASE_URL names engine {_db.get('ENGINE')!r}; Aframes supports "
            "PostgreSQL (postgres://) and SQLite (sqlite://)."
        )
    if env_bool("AFRAMES_DB_POOL", False) and _db["ENGINE"] == "django.db.backends.postgresql":
        # Under ASGI each request runs on a thread of its own, so a persistent connection is
        # never reused (a new one per request); a process-wide psycopg pool is (Django's docs,
        # "Connection pool"). The web server turns it on (docker/entrypoint.sh); workers keep
        # persistent connections, which suit their one thread and their forks.
        _db["CONN_MAX_AGE"] = 0
        _db.pop("CONN_HEALTH_CHECKS", None)
        _db["OPTIONS"] = {
            **_db.get("OPTIONS", {}),
            "pool": {
                "min_size": 1,
                "max_size": env_int("AFRAMES_DB_POOL_SIZE", 8, minimum=1),
                "timeout": 10,
            },
        }
else:
    _db = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(VAR_DIR / "aframes.sqlite3")}
if _db["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the web server read while the worker writes; the busy timeout rides out the
    # short write locks the two take in turn.
    _db["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
    }
    _db.pop("CONN_HEALTH_CHECKS", None)
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Queue and cache ------------------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ConfigError(f"REDIS_URL={REDIS_URL!r} must start with redis://, rediss:// or unix://.")
if not REDIS_URL and not DEBUG and _db["ENGINE"] == "django.db.backends.postgresql":
    # PostgreSQL means a real deployment, usually with web and workers on several machines or
    # containers: a filesystem broker in one machine's var/ would leave the others' tasks
    # unrun without a word.
    raise ConfigError(
        "REDIS_URL must be set when DATABASE_URL names PostgreSQL (e.g. redis://redis:6379/0); "
        "the filesystem broker in var/ is for the embedded SQLite default only."
    )
BROKER_DIR = VAR_DIR / "broker"
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
        }
    }
else:
    # A host part keeps kombu from warning that it defaulted one; the transport ignores it.
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_RESULT_BACKEND = None
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "queue"),
        "data_folder_out": str(BROKER_DIR / "queue"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
    }
    for _folder in ("queue", "processed", "control"):
        (BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS["control_folder"] = str(BROKER_DIR / "control")
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 600, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 540, minimum=1)
if CELERY_TASK_SOFT_TIME_LIMIT >= CELERY_TASK_TIME_LIMIT:
    raise ConfigError(
        "CELERY_TASK_SOFT_TIME_LIMIT must be below CELERY_TASK_TIME_LIMIT so a task can clean up."
    )
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# Queues, so that a fresh day never waits behind a long job: what keeps memory current (a
# day's summary, compile and close, the sweeps) is "live"; what may take minutes (an import,
# a benchmark run) is "bulk". A worker consumes every queue unless told which (-Q, or
# CELERY_QUEUES for the image's worker role); `manage.py serve` runs one worker for each
# group, and a deployment can dedicate workers the same way.
AFRAMES_QUEUE_GROUPS = {"live": ("live",), "bulk": ("imports", "benchmark")}
CELERY_TASK_DEFAULT_QUEUE = "live"
CELERY_TASK_QUEUES = [Queue(name) for group in AFRAMES_QUEUE_GROUPS.values() for name in group]
CELERY_TASK_ROUTES = {
    "streams.run_import_job": {"queue": "imports"},
    "streams.sweep_incoming_uploads": {"queue": "imports"},
    "proactivestream.execute_run": {"queue": "benchmark"},
}
# Redis hands a message that a worker took and never acknowledged (the worker died as a whole)
# back after this long. Above the task time limit, so a task still running is never handed to
# a second worker; a benchmark run, allowed longer, holds a lock that makes a second delivery
# leave it alone (aframes_web/liveness.py). Reconciliation repairs what lost work left well
# before this (AFRAMES_RECONCILE_INTERVAL_S).
AFRAMES_BROKER_VISIBILITY_S = env_int(
    "AFRAMES_BROKER_VISIBILITY_S", CELERY_TASK_TIME_LIMIT + 60, minimum=1
)
if AFRAMES_BROKER_VISIBILITY_S <= CELERY_TASK_TIME_LIMIT:
    raise ConfigError(
        f"AFRAMES_BROKER_VISIBILITY_S={AFRAMES_BROKER_VISIBILITY_S} must be above "
        f"CELERY_TASK_TIME_LIMIT={CELERY_TASK_TIME_LIMIT}: a task still running would be "
        "handed to a second worker."
    )
if REDIS_URL:
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = AFRAMES_BROKER_VISIBILITY_S
# How often the beat holds every derived row to the events (aframes_web/reconcile).
AFRAMES_RECONCILE_INTERVAL_S = env_int("AFRAMES_RECONCILE_INTERVAL_S", 30, minimum=5)
# Periodic work, run by the one beat (docker/compose.yaml) or by `manage.py serve`'s worker.
CELERY_BEAT_SCHEDULE = {
    # Every derived row against the events: lost summaries, compiles, memory closes, imports.
    # A pass that waited past the next one's start (workers down) is dropped, not piled up.
    "reconcile": {
        "task": "aframes.reconcile",
        "schedule": float(AFRAMES_RECONCILE_INTERVAL_S),
        "options": {"expires": float(AFRAMES_RECONCILE_INTERVAL_S)},
    },
    # Compiles a lost message or an exhausted retry left behind (aframes_web/activity).
    "compile-pending": {"task": "activity.compile_pending", "schedule": 300.0},
    # Closes the days of entities that went quiet (memory/): a weekend still closes Friday.
    "memory-close-idle": {"task": "memory.close_idle", "schedule": 900.0},
    # Uploads that a killed request left half-written (aframes_web/streams/uploads.py).
    "sweep-incoming-uploads": {"task": "streams.sweep_incoming_uploads", "schedule": 3600.0},
}

# --- Auth, i18n, static ---------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sign-in (the login page and the admin) locks a username from one address after
# AFRAMES_LOGIN_FAILURES failed attempts for AFRAMES_LOGIN_LOCKOUT_MIN minutes (django-axes).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("AFRAMES_LOGIN_FAILURES", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AFRAMES_LOGIN_LOCKOUT_MIN", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no banner on every command's stderr
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The address is the connection's (REMOTE_ADDR): a header a client can write never decides it.
AXES_IPWARE_META_PRECEDENCE_ORDER = ["REMOTE_ADDR"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or VAR_DIR / "staticfiles")
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
BEHIND_TLS_PROXY = env_bool("TRUST_X_FORWARDED_PROTO", False)
if BEHIND_TLS_PROXY:
    # Behind a TLS-terminating proxy that sets X-Forwarded-Proto (and strips it from clients).
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Strict-Transport-Security on HTTPS responses (never on plain HTTP): a year behind a TLS proxy,
# off otherwise unless asked for.
SECURE_HSTS_SECONDS = env_int(
    "AFRAMES_HSTS_SECONDS", 31_536_000 if BEHIND_TLS_PROXY else 0, minimum=0
)
# Pages load only our own scripts, styles, images and connections (htmx and Swagger UI are
# served from our static files); style attributes in templates need 'unsafe-inline' for
# styles, never for scripts. No page may be framed.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "aframes_web.teams.auth.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON bodies only: the API is for agents and scripts, and one body type is one schema.
    "DEFAULT_PARSER_CLASSES": ["aframes_web.api.parsers.JsonParser"],
    "EXCEPTION_HANDLER": "aframes_web.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "SCHEMA_COERCE_PATH_PK": False,  # the schema's paths say {pk}, as the URLs do
    # Counted in the default cache (Redis when REDIS_URL is set); the rate is AFRAMES_API_RATE.
    "DEFAULT_THROTTLE_CLASSES": ["aframes_web.api.throttling.PrincipalRateThrottle"],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "client_gone": {"()": "aframes_web.mcp.logs.ClientGone"},
        "no_session_to_end": {"()": "aframes_web.mcp.logs.NoSessionToEnd"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        "mcp.server.streamable_http": {"filters": ["client_gone", "no_session_to_end"]},
    },
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# --- Aframes --------------------------------------------------------------------------------
# Privacy principle 8: typed text and clipboard content are dropped at ingestion unless opted in.
AFRAMES_STORE_INPUT_TEXT = env_bool("AFRAMES_STORE_INPUT_TEXT", False)
AFRAMES_MAX_BATCH_EVENTS = env_int("AFRAMES_MAX_BATCH_EVENTS", 10_000, minimum=1)
# An event more than this many hours after the server's clock is refused (a clock gone wrong).
AFRAMES_FUTURE_TOLERANCE_H = env_int("AFRAMES_FUTURE_TOLERANCE_H", 24, minimum=0)
AFRAMES_MAX_BATCH_BYTES = env_int("AFRAMES_MAX_BATCH_BYTES", 32 * 1024 * 1024, minimum=1024)
# A day is compiled at most once per this interval; batches inside it join the next compile.
AFRAMES_COMPILE_INTERVAL_MS = env_int("AFRAMES_COMPILE_INTERVAL_MS", 1000, minimum=0)
# Memory closes the days before local today of an entity that received nothing this long.
AFRAMES_MEMORY_CLOSE_GRACE_MIN = env_int("AFRAMES_MEMORY_CLOSE_GRACE_MIN", 60, minimum=0)
# At day close, let the configured LLM propose extra trajectory segments (validated like all).
AFRAMES_MEMORY_LLM_EXTRACTOR = env_bool("AFRAMES_MEMORY_LLM_EXTRACTOR", False)
# A ProactiveStream run started from the dashboard may take this long on the worker (a run
# replays every stream of a team through every method; the other tasks keep their limits).
AFRAMES_BENCHMARK_TIME_LIMIT = env_int("AFRAMES_BENCHMARK_TIME_LIMIT", 3600, minimum=60)
# An uploaded import may take this long on the worker. The largest upload (AFRAMES_MAX_UPLOAD_MB,
# 2 GB) of gzipped JSONL desktop records (about 20 bytes each compressed) holds about 100
# million events; at the 51,000 events/s make bench-import measured for JSONL on a 2-core
# machine that is 35 minutes, and an hour leaves room for a slower one. Under the limit of the
# other tasks (CELERY_TASK_TIME_LIMIT, 10 min) an import stopped after about 25 million events.
AFRAMES_IMPORT_TIME_LIMIT = env_int("AFRAMES_IMPORT_TIME_LIMIT", 3600, minimum=60)
# A long import runs in turns (aframes_web/streams/uploads.py): after this many seconds on the
# bulk worker, an import with other imports or benchmark runs queued behind it hands the worker
# over and goes on after them. 20 s is what a person who uploads a day's file waits at most
# behind someone's year of history (a day's file itself imports in about a second); each
# handover costs the long import a re-read of what it had stored, bounded there.
AFRAMES_IMPORT_TURN_S = env_int("AFRAMES_IMPORT_TURN_S", 20, minimum=1)

# --- REST API: rate limit and OpenAPI schema ------------------------------------------------
# Requests per token (a signed-in person: per user) and period; beyond it, 429 with Retry-After.
AFRAMES_API_RATE = env_rate("AFRAMES_API_RATE", "1200/minute")
SPECTACULAR_SETTINGS = {
    "TITLE": "Aframes REST API",
    "DESCRIPTION": (
        "Evidence-linked agent memory: ingest events, read compiled activity (days, frames, "
        "context, evidence), ProactMem memory (trajectories, regularities, decisions), "
        "ProactiveStream runs and the labelling workbench. Every list is a keyset page "
        "(`results`, `next`); every error is an RFC 9457 problem (`application/problem+json`)."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "DecisionActionEnum": ["intervene", "abstain"],
    },
}

LLM_BASE_URL = env_str("LLM_BASE_URL")
LLM_MODEL = env_str("LLM_MODEL")
LLM_API_KEY = env_str("LLM_API_KEY")
# Seconds one call may take: a small local model on a busy CPU reads a long prompt slowly.
LLM_TIMEOUT_S = env_int("LLM_TIMEOUT_S", 60, minimum=1)
# Import readers: the longest line they hold, and how much a compressed file may unpack to
# against its own size (a real export compresses 5-30x; a bomb of newlines far more).
AFRAMES_IMPORT_MAX_LINE_MB = env_int("AFRAMES_IMPORT_MAX_LINE_MB", 64, minimum=1)
AFRAMES_IMPORT_MAX_UNPACK_RATIO = env_int("AFRAMES_IMPORT_MAX_UNPACK_RATIO", 100, minimum=1)
# Dashboard uploads: the largest file taken (a larger one is imported from the command line),
# and where an upload in progress is written, so one cut off by a killed process is swept.
AFRAMES_MAX_UPLOAD_MB = env_int("AFRAMES_MAX_UPLOAD_MB", 2048, minimum=1)
FILE_UPLOAD_TEMP_DIR = str(VAR_DIR / "uploads-incoming")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
# Calls to the model each team may make in any hour (answers from the record are free).
AFRAMES_LLM_CALLS_PER_HOUR = env_int("AFRAMES_LLM_CALLS_PER_HOUR", 200, minimum=0)
