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

# --- Lambda's Node (issue 26): the functions run on nodejs22.x (serverless.yml), so the tests do too.
LAMBDA_NODE_MAJOR=22
NODE_DIR=${FAIRWAY_NODE_DIR:-/var/cache/fairway/node-$LAMBDA_NODE_MAJOR}

node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

# When the machine's node is older than Lambda's, installs Lambda's major from the npm registry (the
# node-linux-<arch> package carries bin/node) once into $NODE_DIR, and puts it first on PATH for the
# rest of the run; npm and npx are the machine's, run by that node.
ensure_lambda_node() {
  if [ "$(node_major)" -ge "$LAMBDA_NODE_MAJOR" ]; then echo "node $(node --version)"; return; fi
  if [ "$(node_major "$NODE_DIR/bin/node")" != "$LAMBDA_NODE_MAJOR" ]; then
    local arch tmp
    case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) fail "Node: no node-linux package for $(uname -m)" ;; esac
    echo "installing Node $LAMBDA_NODE_MAJOR (npm package node-linux-$arch@$LAMBDA_NODE_MAJOR) into $NODE_DIR"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "node-linux-$arch@$LAMBDA_NODE_MAJOR" >/dev/null) \
      || fail "Node: npm pack node-linux-$arch@$LAMBDA_NODE_MAJOR failed"
    mkdir -p "$NODE_DIR"
    tar -xzf "$tmp"/node-linux-*.tgz -C "$NODE_DIR" --strip-components=1 package/bin/node package/LICENSE \
      || fail "Node: could not unpack node-linux-$arch"
    rm -rf "$tmp"
  fi
  export PATH="$NODE_DIR/bin:$PATH"
  [ "$(node_major)" = "$LAMBDA_NODE_MAJOR" ] || fail "Node: $NODE_DIR/bin/node is not Node $LAMBDA_NODE_MAJOR"
  echo "node $(node --version) from $NODE_DIR (the machine's is older than Lambda's nodejs$LAMBDA_NODE_MAJOR.x)"
}

# --- TLS services (issue 26): a CA of the run's own, a RabbitMQ node of the tests' own with AMQPS and
# HTTPS management, a PostgreSQL cluster that accepts only TLS. Ports and paths match
# test/harness/services.ts. The machine-wide RabbitMQ and PostgreSQL are never stopped or changed.
TLS_DIR=${FAIRWAY_TLS_DIR:-/tmp/fairway-tls}
TLS_RABBITMQ_NODE=fairway-tls@localhost
TLS_AMQPS_PORT=5681
TLS_AMQP_PORT=5682        # plain, loopback only: the router's broker-restart test (no CA in jest's process)
TLS_DIST_PORT=25681
TLS_MANAGEMENT_HTTPS_PORT=15681
TLS_MANAGEMENT_HTTP_PORT=15682
TLS_POSTGRES_PORT=5442
TLS_POSTGRES_CLUSTER=fairway_tls

# make_ca NAME CN: a self-signed CA in $TLS_DIR/NAME.pem (+ .key).
make_ca() {
  openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$TLS_DIR/$1.key" -out "$TLS_DIR/$1.pem" 2>/dev/null || fail "TLS: could not make the CA $1"
}

# The CA, the server certificate for localhost / 127.0.0.1 it signed, and a second CA that signed
# nothing here (the wrong-CA test). Made again only when missing, expiring or not matching.
ensure_tls_certs() {
  command -v openssl >/dev/null || apt_install openssl
  mkdir -p "$TLS_DIR"
  if [ -f "$TLS_DIR/ca.pem" ] && [ -f "$TLS_DIR/wrong-ca.pem" ] && [ -f "$TLS_DIR/server.pem" ] \
    && openssl verify -CAfile "$TLS_DIR/ca.pem" "$TLS_DIR/server.pem" >/dev/null 2>&1 \
    && openssl x509 -checkend 86400 -noout -in "$TLS_DIR/server.pem" >/dev/null; then
    echo "TLS certificates in $TLS_DIR"
  else
    echo "making a CA and certificates in $TLS_DIR"
    make_ca ca "Fairway test CA"
    make_ca wrong-ca "Fairway wrong test CA"
    openssl req -new -newkey rsa:2048 -nodes -subj "/CN=localhost" \
      -keyout "$TLS_DIR/server.key" -out "$TLS_DIR/server.csr" 2>/dev/null || fail "TLS: could not make the server key"
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' \
      > "$TLS_DIR/server.ext"
    openssl x509 -req -days 825 -in "$TLS_DIR/server.csr" -CA "$TLS_DIR/ca.pem" -CAkey "$TLS_DIR/ca.key" \
      -CAcreateserial -extfile "$TLS_DIR/server.ext" -out "$TLS_DIR/server.pem" 2>/dev/null \
      || fail "TLS: could not sign the server certificate"
  fi
  chmod 755 "$TLS_DIR"
  chmod 644 "$TLS_DIR"/*.pem
  # Each server gets a copy of the key it may read (PostgreSQL refuses a key others can read).
  local service owner
  for service in rabbitmq postgres; do
    owner=$service; [ "$service" = postgres ] || owner=rabbitmq
    id -u "$owner" >/dev/null 2>&1 || continue
    mkdir -p "$TLS_DIR/$service"
    install -m 644 -o "$owner" "$TLS_DIR/server.pem" "$TLS_DIR/$service/server.pem"
    install -m 644 -o "$owner" "$TLS_DIR/ca.pem" "$TLS_DIR/$service/ca.pem"
    install -m 600 -o "$owner" "$TLS_DIR/server.key" "$TLS_DIR/$service/server.key"
  done
}

# served_by_ca PORT [STARTTLS]: the server on 127.0.0.1:PORT presents a certificate our CA signed.
served_by_ca() {
  openssl s_client -connect "127.0.0.1:$1" ${2:+-starttls "$2"} -CAfile "$TLS_DIR/ca.pem" \
    -verify_return_error -verify_ip 127.0.0.1 </dev/null >/dev/null 2>&1
}

tls_rabbitmqctl() { rabbitmqctl -n "$TLS_RABBITMQ_NODE" "$@"; }

start_tls_rabbitmq() {
  local dir=$TLS_DIR/rabbitmq
  mkdir -p "$dir/mnesia" "$dir/log"
  echo '[rabbitmq_management].' > "$dir/enabled_plugins"
  : > "$dir/rabbitmq-env.conf" # not /etc/rabbitmq's, which names the machine-wide node
  cat > "$dir/rabbitmq.conf" <<CONF
listeners.tcp.local = 127.0.0.1:$TLS_AMQP_PORT
listeners.ssl.local = 127.0.0.1:$TLS_AMQPS_PORT
ssl_options.cacertfile = $dir/ca.pem
ssl_options.certfile = $dir/server.pem
ssl_options.keyfile = $dir/server.key
ssl_options.verify = verify_none
ssl_options.fail_if_no_peer_cert = false
management.tcp.ip = 127.0.0.1
management.tcp.port = $TLS_MANAGEMENT_HTTP_PORT
management.ssl.ip = 127.0.0.1
management.ssl.port = $TLS_MANAGEMENT_HTTPS_PORT
management.ssl.cacertfile = $dir/ca.pem
management.ssl.certfile = $dir/server.pem
management.ssl.keyfile = $dir/server.key
CONF
  chown -R rabbitmq:rabbitmq "$dir"
  echo "starting RabbitMQ node $TLS_RABBITMQ_NODE (AMQPS $TLS_AMQPS_PORT, HTTPS management $TLS_MANAGEMENT_HTTPS_PORT)"
  (cd "$dir" && runuser -u rabbitmq -- env \
    RABBITMQ_NODENAME="$TLS_RABBITMQ_NODE" \
    RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 RABBITMQ_NODE_PORT="$TLS_AMQP_PORT" RABBITMQ_DIST_PORT="$TLS_DIST_PORT" \
    RABBITMQ_CONF_ENV_FILE="$dir/rabbitmq-env.conf" RABBITMQ_CONFIG_FILE="$dir/rabbitmq.conf" \
    RABBITMQ_ADVANCED_CONFIG_FILE="$dir/advanced.config" RABBITMQ_ENABLED_PLUGINS_FILE="$dir/enabled_plugins" \
    RABBITMQ_MNESIA_BASE="$dir/mnesia" RABBITMQ_LOG_BASE="$dir/log" RABBITMQ_PID_FILE="$dir/pid" \
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}' \
    /usr/lib/rabbitmq/bin/rabbitmq-server -detached) || fail "RabbitMQ node $TLS_RABBITMQ_NODE could not be started (logs: $dir/log)"
}

# A RabbitMQ node of the tests' own beside the machine-wide one; the broker-restart test restarts it.
ensure_tls_rabbitmq() {
  if tls_rabbitmqctl -q status >/dev/null 2>&1; then
    if ! served_by_ca "$TLS_AMQPS_PORT"; then
      echo "RabbitMQ node $TLS_RABBITMQ_NODE serves another certificate; restarting it"
      tls_rabbitmqctl -q stop >/dev/null 2>&1 || fail "RabbitMQ node $TLS_RABBITMQ_NODE could not be stopped"
      start_tls_rabbitmq
    fi
  else
    start_tls_rabbitmq
  fi
  wait_for 60 "RabbitMQ node $TLS_RABBITMQ_NODE" tls_rabbitmqctl -q status
  timeout 60 rabbitmqctl -n "$TLS_RABBITMQ_NODE" -q await_startup || fail "RabbitMQ node $TLS_RABBITMQ_NODE did not finish starting"
  wait_for 60 "RabbitMQ node $TLS_RABBITMQ_NODE's HTTPS management API (https://127.0.0.1:$TLS_MANAGEMENT_HTTPS_PORT)" \
    curl -fsS --cacert "$TLS_DIR/ca.pem" -u guest:guest "https://127.0.0.1:$TLS_MANAGEMENT_HTTPS_PORT/api/overview"
  served_by_ca "$TLS_AMQPS_PORT" || fail "RabbitMQ node $TLS_RABBITMQ_NODE: AMQPS on $TLS_AMQPS_PORT does not present the test CA's certificate"
  echo "RabbitMQ node $TLS_RABBITMQ_NODE ready (AMQPS, HTTPS management)"
}

# A PostgreSQL cluster of the tests' own that refuses every connection without TLS.
ensure_tls_postgres() {
  local version dir
  version=$(ls /etc/postgresql | sort -V | tail -n 1)
  dir=/etc/postgresql/$version/$TLS_POSTGRES_CLUSTER
  if [ ! -d "$dir" ]; then
    echo "creating PostgreSQL cluster $version/$TLS_POSTGRES_CLUSTER on port $TLS_POSTGRES_PORT (TLS only)"
    pg_createcluster -q --start-conf=manual -p "$TLS_POSTGRES_PORT" "$version" "$TLS_POSTGRES_CLUSTER" >/dev/null \
      || fail "PostgreSQL: could not create cluster $TLS_POSTGRES_CLUSTER"
  fi
  # Set on every run (cheap, and a cluster left half-made by an earlier run is mended).
  local setting
  for setting in "listen_addresses localhost" "port $TLS_POSTGRES_PORT" "ssl on" \
    "ssl_cert_file $TLS_DIR/postgres/server.pem" "ssl_key_file $TLS_DIR/postgres/server.key"; do
    # shellcheck disable=SC2086 # name and value
    pg_conftool -s "$version" "$TLS_POSTGRES_CLUSTER" set $setting || fail "PostgreSQL: could not set ${setting%% *}"
  done
  cat > "$dir/pg_hba.conf" <<HBA
local     all all                peer
hostssl   all all 127.0.0.1/32   scram-sha-256
hostssl   all all ::1/128        scram-sha-256
hostnossl all all 0.0.0.0/0      reject
hostnossl all all ::/0           reject
HBA
  if ! pg_isready -q -h 127.0.0.1 -p "$TLS_POSTGRES_PORT"; then
    pg_ctlcluster --skip-systemctl-redirect "$version" "$TLS_POSTGRES_CLUSTER" start \
      || fail "PostgreSQL $version $TLS_POSTGRES_CLUSTER could not be started"
  else # picks up pg_hba.conf and certificate files made again since it started
    pg_ctlcluster --skip-systemctl-redirect "$version" "$TLS_POSTGRES_CLUSTER" reload \
      || fail "PostgreSQL $version $TLS_POSTGRES_CLUSTER could not be reloaded"
  fi
  wait_for 60 "PostgreSQL TLS cluster (127.0.0.1:$TLS_POSTGRES_PORT)" pg_isready -q -h 127.0.0.1 -p "$TLS_POSTGRES_PORT"
  if ! PGPASSWORD=postgres PGSSLMODE=verify-full PGSSLROOTCERT="$TLS_DIR/ca.pem" \
    psql -h 127.0.0.1 -p "$TLS_POSTGRES_PORT" -U postgres -d postgres -Atc 'select 1' >/dev/null 2>&1; then
    runuser -u postgres -- psql -q -p "$TLS_POSTGRES_PORT" -c "ALTER ROLE postgres PASSWORD 'postgres'" \
      || fail "PostgreSQL TLS cluster: could not set the local test password for role postgres"
  fi
  served_by_ca "$TLS_POSTGRES_PORT" postgres || fail "PostgreSQL TLS cluster: port $TLS_POSTGRES_PORT does not present the test CA's certificate"
  echo "PostgreSQL TLS cluster ready (hostssl only)"
}

# --- RabbitMQ 4 (issue 36): a RabbitMQ 4.0 node of the tests' own, from Debian 13's package (4.0.5,
# Erlang 27) in a debootstrap chroot kept between runs like $NODE_DIR. It has its own node name,
# ports and epmd port, so the machine-wide 3.10 node and its epmd are untouched. Ports match
# test/harness/services.ts (the jest project integration-rabbitmq4 runs on this node).
RABBITMQ4_ROOT=${FAIRWAY_RABBITMQ4_ROOT:-/var/cache/fairway/rabbitmq4-trixie}
RABBITMQ4_NODE=fairway-rmq4@localhost
RABBITMQ4_AMQP_PORT=5691
RABBITMQ4_MANAGEMENT_PORT=15691
RABBITMQ4_DIST_PORT=25691
RABBITMQ4_EPMD_PORT=4391
RABBITMQ4_UID=${FAIRWAY_RABBITMQ4_UID:-46372} # the chroot's rabbitmq user; no host user may have it

rabbitmq4_chroot() { chroot "$RABBITMQ4_ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# Runs a command in the chroot as its rabbitmq user, with the node's environment.
rabbitmq4_as_rabbitmq() {
  rabbitmq4_chroot HOME=/var/lib/rabbitmq RABBITMQ_NODENAME="$RABBITMQ4_NODE" \
    ERL_EPMD_PORT="$RABBITMQ4_EPMD_PORT" ERL_EPMD_ADDRESS=127.0.0.1 \
    setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups -- "$@"
}
rabbitmq4ctl() { rabbitmq4_as_rabbitmq rabbitmqctl -n "$RABBITMQ4_NODE" "$@"; }

# The chroot with rabbitmq-server installed; made once (3-6 minutes, ~330 MB), then reused.
ensure_rabbitmq4_chroot() {
  [ -x "$RABBITMQ4_ROOT/usr/lib/rabbitmq/bin/rabbitmq-server" ] && return
  if [ ! -x "$RABBITMQ4_ROOT/usr/bin/apt-get" ]; then
    command -v debootstrap >/dev/null || apt_install debootstrap
    echo "making a Debian 13 (trixie) chroot in $RABBITMQ4_ROOT"
    debootstrap --variant=minbase trixie "$RABBITMQ4_ROOT" >/dev/null || fail "RabbitMQ 4: debootstrap trixie into $RABBITMQ4_ROOT failed"
  fi
  if getent passwd "$RABBITMQ4_UID" >/dev/null || getent group "$RABBITMQ4_UID" >/dev/null; then
    fail "RabbitMQ 4: uid/gid $RABBITMQ4_UID is taken on the host; set FAIRWAY_RABBITMQ4_UID"
  fi
  printf '#!/bin/sh\nexit 101\n' > "$RABBITMQ4_ROOT/usr/sbin/policy-rc.d" # no service starts during install
  chmod 755 "$RABBITMQ4_ROOT/usr/sbin/policy-rc.d"
  printf '127.0.0.1 localhost\n::1 localhost\n' > "$RABBITMQ4_ROOT/etc/hosts"
  cp /etc/resolv.conf "$RABBITMQ4_ROOT/etc/resolv.conf"
  # Made before the package so its postinst takes this uid, not the next free one.
  if ! rabbitmq4_chroot id -u rabbitmq >/dev/null 2>&1; then
    rabbitmq4_chroot groupadd --gid "$RABBITMQ4_UID" rabbitmq \
      && rabbitmq4_chroot useradd --no-create-home --uid "$RABBITMQ4_UID" --gid rabbitmq --home-dir /var/lib/rabbitmq \
        --shell /usr/sbin/nologin rabbitmq || fail "RabbitMQ 4: could not add the chroot's rabbitmq user"
  fi
  echo "installing rabbitmq-server in $RABBITMQ4_ROOT"
  rabbitmq4_chroot DEBIAN_FRONTEND=noninteractive sh -c \
    'apt-get update -qq && apt-get install -y -qq --no-install-recommends rabbitmq-server >/dev/null' \
    || fail "RabbitMQ 4: apt-get install rabbitmq-server in $RABBITMQ4_ROOT failed"
}

start_rabbitmq4() {
  mountpoint -q "$RABBITMQ4_ROOT/proc" || mount -t proc proc "$RABBITMQ4_ROOT/proc" || fail "RabbitMQ 4: could not mount /proc in $RABBITMQ4_ROOT"
  local etc=$RABBITMQ4_ROOT/etc/rabbitmq
  echo '[rabbitmq_management].' > "$etc/enabled_plugins"
  cat > "$etc/rabbitmq.conf" <<CONF
listeners.tcp.local = 127.0.0.1:$RABBITMQ4_AMQP_PORT
management.tcp.ip = 127.0.0.1
management.tcp.port = $RABBITMQ4_MANAGEMENT_PORT
CONF
  cat > "$etc/rabbitmq-env.conf" <<CONF
RABBITMQ_NODENAME=$RABBITMQ4_NODE
RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
RABBITMQ_NODE_PORT=$RABBITMQ4_AMQP_PORT
RABBITMQ_DIST_PORT=$RABBITMQ4_DIST_PORT
RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS='-kernel inet_dist_use_interface {127,0,0,1}'
CONF
  echo "starting RabbitMQ node $RABBITMQ4_NODE (AMQP $RABBITMQ4_AMQP_PORT, management $RABBITMQ4_MANAGEMENT_PORT, epmd $RABBITMQ4_EPMD_PORT)"
  rabbitmq4_as_rabbitmq sh -c 'cd /var/lib/rabbitmq && exec rabbitmq-server -detached' \
    || fail "RabbitMQ node $RABBITMQ4_NODE could not be started (logs: $RABBITMQ4_ROOT/var/log/rabbitmq)"
}

ensure_rabbitmq4() {
  ensure_rabbitmq4_chroot
  rabbitmq4ctl -q status >/dev/null 2>&1 || start_rabbitmq4
  wait_for 90 "RabbitMQ node $RABBITMQ4_NODE" rabbitmq4ctl -q status
  rabbitmq4ctl -q -t 90 await_startup >/dev/null 2>&1 || fail "RabbitMQ node $RABBITMQ4_NODE did not finish starting"
  wait_for 60 "RabbitMQ node $RABBITMQ4_NODE's management API (http://127.0.0.1:$RABBITMQ4_MANAGEMENT_PORT)" \
    curl -fsS -u guest:guest "http://127.0.0.1:$RABBITMQ4_MANAGEMENT_PORT/api/overview"
  echo "RabbitMQ node $RABBITMQ4_NODE ready ($(rabbitmq4ctl -q version 2>/dev/null))"
}
