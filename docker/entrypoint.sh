#!/bin/sh
# Starts one Aframes role in the container: web | worker | beat | manage ARGS... | any command.
set -eu

role="${1:-web}"

case "$role" in
  web)
    # Migrations run before the server accepts requests; worker and beat wait for web to be
    # healthy in compose, so they never see an unmigrated schema.
    python manage.py migrate --noinput
    # ASGI: Django and the MCP server (/mcp) in one application, on uvicorn workers, with a
    # database connection pool per worker (settings.py: AFRAMES_DB_POOL).
    export AFRAMES_DB_POOL="${AFRAMES_DB_POOL:-1}"
    exec gunicorn aframes_web.asgi:application \
      --worker-class uvicorn_worker.UvicornWorker \
      --bind 0.0.0.0:8000 \
      --workers "${WEB_CONCURRENCY:-2}" \
      --timeout 120 \
      --access-logfile -
    ;;
  worker)
    # Every queue unless CELERY_QUEUES names some (e.g. "imports,benchmark" for a worker of
    # long jobs beside one of "live"): settings.AFRAMES_QUEUE_GROUPS.
    exec celery -A aframes_web worker --loglevel INFO --concurrency "${CELERY_CONCURRENCY:-2}" \
      ${CELERY_QUEUES:+--queues "$CELERY_QUEUES"}
    ;;
  beat)
    # The schedule file lives on the shared var volume so a restarted beat keeps its last-run times.
    exec celery -A aframes_web beat --loglevel INFO --schedule /app/var/celerybeat-schedule
    ;;
  manage)
    shift
    exec python manage.py "$@"
    ;;
  *)
    exec "$@"
    ;;
esac
