# Functions that bring up the services the tests need; sourced by .ci/run.
# Each step acts only when needed and fails with a message naming the service.

fail() { echo "ci: $*" >&2; exit 1; }

apt_install() {
  if [ -z "${APT_UPDATED:-}" ]; then apt-get update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # wait_for SECONDS DESCRIPTION COMMAND...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq "$seconds"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  fail "$what was not ready after ${seconds}s"
}

ensure_rabbitmq() {
  command -v rabbitmq-server >/dev/null || { echo "installing rabbitmq-server"; apt_install rabbitmq-server curl; }
  # --offline edits the enabled-plugins file even while the node is down; a running node
  # picks the change up at once through the online call.
  if rabbitmqctl -q status >/dev/null 2>&1; then
    rabbitmq-plugins enable rabbitmq_management >/dev/null || fail "RabbitMQ: could not enable the management plugin"
  else
    rabbitmq-plugins enable --offline rabbitmq_management >/dev/null || fail "RabbitMQ: could not enable the management plugin"
    echo "starting RabbitMQ"
    rabbitmq-server -detached
    wait_for 60 "RabbitMQ" rabbitmqctl -q status
  fi
  timeout 60 rabbitmqctl -q await_startup || fail "RabbitMQ did not finish starting"
  wait_for 60 "RabbitMQ management API (http://127.0.0.1:15672)" \
    curl -fsS -u guest:guest http://127.0.0.1:15672/api/overview
  echo "RabbitMQ ready, management API answering"
}

ensure_postgres() {
  command -v pg_ctlcluster >/dev/null || { echo "installing postgresql"; apt_install postgresql; }
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  [ -n "$version" ] || fail "PostgreSQL: no cluster found under /etc/postgresql"
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    echo "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start || fail "PostgreSQL $version main could not be started"
  fi
  wait_for 60 "PostgreSQL (127.0.0.1:5432)" pg_isready -q -h 127.0.0.1 -p 5432
  # The tests log in as postgres over TCP (test/harness/services.ts). A stock Debian cluster
  # wants a password there, so give the local test role the one the harness uses.
  if ! PGPASSWORD=postgres psql -h 127.0.0.1 -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
    runuser -u postgres -- psql -q -c "ALTER ROLE postgres PASSWORD 'postgres'" \
      || fail "PostgreSQL: could not set the local test password for role postgres"
  fi
  echo "PostgreSQL ready"
}
