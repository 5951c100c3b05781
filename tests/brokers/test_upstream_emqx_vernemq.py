"""Our EMQX and VerneMQ configuration agrees with each broker's upstream
source at the pinned versions. Neither broker can run here, so the facts were
read in the source (see "Verified against upstream" in brokers/emqx/README.md
and brokers/vernemq/README.md); each is written down below with its citation
and checked against our files, offline. A version bump in .env fails
test_the_verified_versions_are_the_pinned_images until they are read again."""

import re
from urllib.parse import urlsplit

import pytest

from conftest import ROOT
from mqttbench.brokers import facts as broker_facts

# The sources read (repository, tag or commit).
EMQX = "emqx/emqx v5.8.6 (b895cdcd8cbc34c5f8fc5ea8b948cd2c40bba0fc)"
HOCON = "emqx/hocon 0.43.4 (3f663c7a92ba3dc7043034588cb86e395d2ea18d)"
DOCKER_VMQ = "vernemq/docker-vernemq 31299afd47c8fd26c241c6939a5d329f63b5c26c (VERNEMQ_VERSION 2.1.1)"
VMQ = "vernemq/vernemq 2.1.1 (91c971a372b654f6cc2d633033c06eecaee06d11)"
CUTTLEFISH = "Kyorai/cuttlefish v3.4.0 (a48eab9b0b5ff3073b89ba3d5429d7a17dfe18e4)"

VERIFIED_IMAGES = {"EMQX_IMAGE": "emqx/emqx:5.8.6", "VERNEMQ_IMAGE": "vernemq/vernemq:2.1.1"}


# ---- our files -------------------------------------------------------------


def env_file(name):
    """KEY=value lines of brokers/<name>/<name>.env, in order."""
    pairs = []
    for line in (ROOT / f"brokers/{name}/{name}.env").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            pairs.append((key, value))
    return pairs


def compose_service(name):
    """The text of one service of compose.yaml as written: the checks look for its literal lines."""
    text = (ROOT / "compose.yaml").read_text()
    m = re.search(rf"^  {re.escape(name)}:\n(.*?)(?=^  \S|^\S|\Z)", text, re.M | re.S)
    assert m, f"no service {name} in compose.yaml"
    return m.group(1)


# ---- how each image turns variables into configuration --------------------


def emqx_path(var):
    """EMQX_FOO__BAR -> foo.bar: prefix EMQX_ (bin/emqx exports
    HOCON_ENV_OVERRIDE_PREFIX=EMQX_), lower-cased, split at `__`, empty parts
    dropped (hocon_tconf:env_name_to_path)."""
    assert var.startswith("EMQX_"), var
    return ".".join(p for p in var.removeprefix("EMQX_").lower().split("__") if p)


VMQ_NOT_CONF = ("DISCOVERY_NODE", "KUBERNETES", "SWARM", "COMPOSE", "DOCKER_VERNEMQ_USER")


def vernemq_conf_line(var, value):
    """The vernemq.conf line the image's start script writes for one variable,
    or None: `env | grep DOCKER_VERNEMQ | grep -v ... | cut -c 16- | awk
    (lower-case the leading [A-Z0-9_]*) | sed 's/__/./g'` (bin/vernemq.sh)."""
    line = f"{var}={value}"
    if "DOCKER_VERNEMQ" not in line or any(s in line for s in VMQ_NOT_CONF):
        return None
    line = line[15:]
    n = re.match(r"[A-Z0-9_]*", line).end()
    return (line[:n].lower() + line[n:]).replace("__", ".")


# ---- validators for the value types of the upstream schemas ----------------


def integer(lo=None, hi=None, infinity=False):
    def check(v):
        if infinity and v == "infinity":
            return True
        if not re.fullmatch(r"-?\d+", v):
            return False
        return (lo is None or int(v) >= lo) and (hi is None or int(v) <= hi)

    return check


def one_of(*values):
    return lambda v: v in values


def size(max_bytes):
    units = {"": 1, "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}

    def check(v):
        m = re.fullmatch(r"(\d+)(B|KB|MB|GB)?", v)
        return bool(m) and int(m.group(1)) * units[m.group(2) or ""] <= max_bytes

    return check


def ip_port(v):
    return bool(re.fullmatch(r"\d{1,3}(\.\d{1,3}){3}:\d{1,5}", v))


def tls_file(name):
    """The file compose's init-tls makes (scripts/init/tls.sh), in the secrets volume."""
    return lambda v: v == f"/run/secrets/mqtt-bench/tls/{name}"


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
SCHEMA = f"{EMQX} apps/emqx/src/emqx_schema.erl"
CONF_SCHEMA = f"{EMQX} apps/emqx_conf/src/emqx_conf_schema.erl"

# EMQX 5.8.6 settings we set: path -> (value check, default, citation).
EMQX_SETTINGS = {
    "node.name": (lambda v: bool(re.fullmatch(r"[\w.-]+@[\w.-]+", v)), "emqx@127.0.0.1", CONF_SCHEMA),
    "mqtt.max_inflight": (integer(1, 65535), "32", SCHEMA),
    "mqtt.max_mqueue_len": (integer(0, infinity=True), "1000", SCHEMA),
    "mqtt.max_awaiting_rel": (integer(0, infinity=True), "100", SCHEMA),
    # validate_max_packet_size: at most 268435455; convert_max_packet_size maps "256MB" to it.
    "mqtt.max_packet_size": (lambda v: v == "256MB" or size(268435455)(v), "1MB", SCHEMA),
    "force_shutdown.max_mailbox_size": (integer(0), "1000", SCHEMA),
    # validate_heap_size: at most 128 GB.
    "force_shutdown.max_heap_size": (size(128 * 1024**3), "32MB", SCHEMA),
    # emqx_listeners:default_max_conn() -> <<"infinity">>.
    "listeners.tcp.default.max_connections": (integer(1, infinity=True), "infinity", SCHEMA),
    # base_listener/1: acceptors, pos_integer(), default 16.
    "listeners.tcp.default.acceptors": (integer(1), "16", SCHEMA),
    "listeners.ssl.default.enable": (one_of("true", "false"), "true", SCHEMA),
    "listeners.ws.default.enable": (one_of("true", "false"), "true", SCHEMA),
    # The ssl listeners: listeners.ssl.<name> (tombstone_map of mqtt_ssl_listener), ssl_options
    # (listener_ssl_opts: common_ssl_opts_schema, server_ssl_opts_schema); the files default to
    # ${EMQX_ETC_DIR}/certs/ (cert_file/2, default_listener(ssl)).
    **{
        f"listeners.ssl.{name}.ssl_options.{key}": (tls_file(file), f"${{EMQX_ETC_DIR}}/certs/{default}", SCHEMA)
        for name in ("default", "mtls")
        for key, file, default in (
            ("certfile", "server.pem", "cert.pem"),
            ("keyfile", "server.key", "key.pem"),
            ("cacertfile", "ca.pem", "cacert.pem"),
        )
    },
    # base_listener bind: ip_port(); to_ip_port takes a port alone (every address); mqtt_listener(8883).
    "listeners.ssl.mtls.bind": (integer(1, 65535), "8883", SCHEMA),
    "listeners.ssl.mtls.ssl_options.verify": (one_of("verify_peer", "verify_none"), "verify_none", SCHEMA),
    # validate_server_ssl_opts: true needs verify = verify_peer.
    "listeners.ssl.mtls.ssl_options.fail_if_no_peer_cert": (one_of("true", "false"), "false", SCHEMA),
    "listeners.wss.default.enable": (one_of("true", "false"), "true", SCHEMA),
    "prometheus.enable_basic_auth": (
        one_of("true", "false"),
        "false",
        f"{EMQX} apps/emqx_prometheus/src/emqx_prometheus_schema.erl (true from 6.3.0, commit fdc5590f41)",
    ),
    "log.console.level": (one_of(*LOG_LEVELS), "warning", CONF_SCHEMA),
}

VMQ_SCHEMA = f"{VMQ} apps/vmq_server/priv/vmq_server.schema"
VMQ_VARS = f"{VMQ} vars.config"
# vernemq 2.1.1 rebar.config installs it as share/schema/33-eleveldb.schema.
LEVELDB = "basho/eleveldb 0ad275cc18da6f9ce77ddef1a6a73465b0424afe (vernemq 2.1.1 rebar.lock)"
VMQ_SSL = f"{VMQ} apps/vmq_server/src/vmq_ssl.erl"
VM_SCHEMA = f"{CUTTLEFISH} priv/erlang_vm.schema (vm.args of the image wins: {DOCKER_VMQ} files/vm.args)"

# vernemq.conf keys we set: key -> (value check, default, citation).
VMQ_SETTINGS = {
    "nodename": (lambda v: bool(re.fullmatch(r"[\w.-]+", v)), "VerneMQ@<container ip>", f"{DOCKER_VMQ} bin/vernemq.sh"),
    "erlang.max_ports": (integer(1024, 134217727), "512000", VM_SCHEMA),
    "erlang.process_limit": (integer(1024, 134217727), "512000", VM_SCHEMA),
    "allow_anonymous": (one_of("on", "off"), "off", VMQ_SCHEMA),
    # No default: a commented example (mqtt_default_ip/port); the start script adds <container ip>:1883.
    "listener.tcp.default": (ip_port, "127.0.0.1:1883", f"{VMQ_SCHEMA} ({{commented, ...}}), {VMQ_VARS}"),
    "listener.tcp.allowed_protocol_versions": (
        lambda v: set(v.split(",")) <= {"3", "4", "5", "131", "132"},
        "3,4,5,131",
        VMQ_SCHEMA,
    ),
    # TLS and WebSocket listeners ({datatype, ip}; commented examples mqtts_default_* 127.0.0.1:8883,
    # mqtt_default_ws_* 127.0.0.1:8080); the start script adds listener.ws.default = <container ip>:8080
    # unless DOCKER_VERNEMQ_LISTENER__WS__DEFAULT is set.
    "listener.ssl.default": (ip_port, "127.0.0.1:8883", f"{VMQ_SCHEMA} ({{commented, ...}}), {VMQ_VARS}"),
    "listener.ssl.mtls": (ip_port, "127.0.0.1:8883", f"{VMQ_SCHEMA} (listener.ssl.$name)"),
    "listener.ws.default": (ip_port, "<container ip>:8080", f"{VMQ_SCHEMA}, {VMQ_VARS}, {DOCKER_VMQ} bin/vernemq.sh"),
    # Protocol level: every ssl listener's unless one sets its own (vmq_schema:extract/4).
    "listener.ssl.cafile": (tls_file("ca.pem"), '""', f"{VMQ_SCHEMA} (file-exists, file-is-readable)"),
    "listener.ssl.certfile": (tls_file("server.pem"), '""', f"{VMQ_SCHEMA} (file-exists, ..., file-is-pem)"),
    "listener.ssl.keyfile": (tls_file("server.key"), '""', f"{VMQ_SCHEMA} (file-exists, ..., file-is-pem)"),
    # vmq_ssl:opts/1: fail_if_no_peer_cert = require_certificate, verify = verify_peer when on.
    "listener.ssl.mtls.require_certificate": (one_of("on", "off"), "off", f"{VMQ_SCHEMA}, {VMQ_SSL}"),
    # vmq_schema:parse_tls_list/1 splits at commas, each of tlsv1 .. tlsv1.3;
    # vmq_ssl:opts/1 sets versions to it and picks the 1.3 and 1.2 suites.
    "listener.ssl.tls_version": (
        lambda v: set(v.split(",")) <= {"tlsv1", "tlsv1.1", "tlsv1.2", "tlsv1.3"},
        "tlsv1.2",
        f"{VMQ_SCHEMA}, {VMQ} apps/vmq_server/src/vmq_schema.erl (parse_tls_list), {VMQ_SSL}",
    ),
    "listener.ssl.allowed_protocol_versions": (
        lambda v: set(v.split(",")) <= {"3", "4", "5", "131", "132"},
        "3,4,5,131",
        VMQ_SCHEMA,
    ),
    "listener.ws.allowed_protocol_versions": (
        lambda v: set(v.split(",")) <= {"3", "4", "5", "131", "132"},
        "3,4,5,131",
        VMQ_SCHEMA,
    ),
    "listener.max_connections": (integer(infinity=True), "10000", VMQ_VARS),
    "listener.nr_of_acceptors": (integer(1), "10", VMQ_VARS),
    "max_inflight_messages": (integer(0), "20", VMQ_SCHEMA),
    "max_online_messages": (integer(-1), "1000", VMQ_SCHEMA),
    "max_offline_messages": (integer(-1), "1000", VMQ_SCHEMA),
    # Percent of the memory memsup reports; c_src/eleveldb.cc takes 1..100.
    "leveldb.maximum_memory.percent": (integer(1, 100), "70", f"{LEVELDB} priv/eleveldb.schema"),
    # filter_subscribers/2 clauses in apps/vmq_server/src/vmq_shared_subscriptions.erl.
    "shared_subscription_policy": (
        one_of("prefer_local", "local_only", "random", "prefer_online_before_local"),
        "prefer_local",
        VMQ_SCHEMA,
    ),
    "log.console.level": (one_of(*LOG_LEVELS), "info", f"{VMQ} files/vmq.schema"),
}

# Which series the endpoints expose, and that our Telegraf inputs keep them, is
# tested on the real brokers' answers: tests/brokers/test_broker_captures.py.


# ---- the facts ---------------------------------------------------------------


def emqx_variables_name_settings_of_the_pinned_version():
    for var, value in env_file("emqx"):
        path = emqx_path(var)
        assert path in EMQX_SETTINGS, f"{var}: {path} is not a setting read from {EMQX}"
        check, _, source = EMQX_SETTINGS[path]
        assert check(value), f"{var}={value}: not a valid {path} ({source})"
        # Values are parsed as HOCON literals (hocon_tconf:parse_env): keep them plain. An
        # absolute path is none (no token starts with one `/`, two start a comment), so it is
        # taken as the string it is.
        plain = re.fullmatch(r"[\w.@:-]+", value) or re.fullmatch(r"(/[\w.-]+)+", value)
        assert plain, f"{var}={value}: HOCON would parse it"


def emqx_listens_for_tls_mutual_tls_and_websocket_where_compose_publishes():
    env = {emqx_path(k): v for k, v in env_file("emqx")}
    # The default ssl and ws listeners bind 0.0.0.0:8883 and 0.0.0.0:8083, ws at mqtt_path
    # /mqtt (default_listener/1, ws_opts); the mtls one binds the port we give it.
    assert env["listeners.ssl.default.enable"] == env["listeners.ws.default.enable"] == "true"
    assert not [k for k in env if re.fullmatch(r"listeners\.(ssl\.default|ws\.default)\.(bind|websocket\..*)", k)]
    assert env["listeners.ssl.mtls.bind"] == "8884"
    # Mutual TLS: the client's certificate is asked for, checked against our CA, and required.
    assert env["listeners.ssl.mtls.ssl_options.verify"] == "verify_peer"
    assert env["listeners.ssl.mtls.ssl_options.fail_if_no_peer_cert"] == "true"
    assert "listeners.ssl.default.ssl_options.verify" not in env  # verify_none: any client
    block = compose_service("emqx")
    for var, port in (("MQTTS_PORT", 8883), ("MTLS_PORT", 8884), ("WS_PORT", 8083)):
        assert f"127.0.0.1:${{{var}:-{port}}}:{port}" in block, var


def emqx_secrets_are_exported_by_a_wrapper_not_listed_in_the_env_file():
    names = {k for k, _ in env_file("emqx")}
    assert not names & {"EMQX_DASHBOARD__DEFAULT_PASSWORD", "EMQX_NODE__COOKIE"}
    # The image's entrypoint reads no *_FILE; neither field takes file:// (plain binary()/string()).
    block = compose_service("emqx")
    assert "EMQX_DASHBOARD__DEFAULT_PASSWORD=emqx_dashboard_password" in block
    assert "EMQX_NODE__COOKIE=emqx_node_cookie" in block


def emqx_generated_secrets_are_plain_alphanumerics():
    # parse_env reads values as HOCON (`//` starts a comment, `${` a substitution),
    # and bin/emqx passes the cookie unquoted in ERL_FLAGS (-setcookie $COOKIE).
    # What generates secrets: the compose stack's init service (EMQX's among
    # them) and the native stack's file (mqttbench/stack/secrets.py).
    init = ROOT / "scripts/init/secrets.sh"
    assert "base64 | tr -d '/+=" in init.read_text(), f"{init}: emqx secrets must be [A-Za-z0-9]"
    from mqttbench.stack.secrets import generate

    assert all(re.fullmatch(r"[A-Za-z0-9]{20,}", generate()) for _ in range(200))


def emqx_node_name_is_kept_by_the_images_entrypoint():
    # docker-entrypoint.sh derives EMQX_NODE_NAME from `hostname -i` only when
    # neither EMQX_NODE_NAME nor EMQX_NODE__NAME is set.
    assert dict(env_file("emqx"))["EMQX_NODE__NAME"] == "emqx@127.0.0.1"


def emqx_compose_runs_the_images_entrypoint_and_command():
    block = compose_service("emqx")
    if "entrypoint:" in block:  # compose then drops the image's CMD: it must be restated
        assert "/usr/bin/docker-entrypoint.sh" in block
        assert re.search(r'command:\s*\[\s*"?/opt/emqx/bin/emqx"?,\s*"?foreground"?\s*\]', block)


def emqx_healthcheck_is_the_release_script():
    # /opt/emqx/bin/emqx ctl status: exit 0 only when the node answers and the
    # command runs; the cookie comes from the running node's argv (ps) under docker exec.
    assert re.search(r'"/opt/emqx/bin/emqx",\s*"ctl",\s*"status"', compose_service("emqx"))


def emqx_prometheus_stats_are_scraped_from_the_dashboard_listener_without_auth():
    m = broker_facts.load("emqx")["metrics"]
    url = urlsplit(m["endpoint"])
    assert (url.port, url.path) == (18083, "/api/v5/prometheus/stats")
    assert "127.0.0.1:${EMQX_DASHBOARD_PORT:-18083}:18083" in compose_service("emqx")
    assert dict(env_file("emqx"))["EMQX_PROMETHEUS__ENABLE_BASIC_AUTH"] == "false"


def vernemq_variables_become_known_vernemq_conf_lines():
    for var, value in env_file("vernemq"):
        assert "__" not in value, f"{var}: the start script's sed would turn __ in the value into ."
        line = vernemq_conf_line(var, value)
        assert line, f"{var} is not written to vernemq.conf"
        key, _, conf_value = line.partition("=")
        assert key in VMQ_SETTINGS, f"{var}: {key} is not a setting read from {VMQ}"
        check, _, source = VMQ_SETTINGS[key]
        assert check(conf_value), f"{var}={value}: not a valid {key} ({source})"


def vernemq_listens_for_tls_mutual_tls_and_websocket_where_compose_publishes():
    conf = dict(vernemq_conf_line(k, v).split("=", 1) for k, v in env_file("vernemq"))
    assert conf["listener.ssl.default"] == "0.0.0.0:8883" and conf["listener.ssl.mtls"] == "0.0.0.0:8884"
    assert conf["listener.ws.default"] == "0.0.0.0:8083"  # cowboy route "/mqtt", subprotocol mqtt
    # Mutual TLS on mtls alone: the protocol-level flag would be every ssl listener's.
    assert conf["listener.ssl.mtls.require_certificate"] == "on" and "listener.ssl.require_certificate" not in conf
    # configure_vernemq_listeners splits each DOCKER_VERNEMQ_LISTENER__* name at every `_` (IFS='__')
    # and writes a listener on <container ip> for a value `true` with no property, or a PORT property.
    for var, value in env_file("vernemq"):
        if var.startswith("DOCKER_VERNEMQ_LISTENER__"):
            assert value != "true" and not var.endswith("__PORT"), f"{var}: the start script adds a listener for it"
    block = compose_service("vernemq")
    for var, port in (("MQTTS_PORT", 8883), ("MTLS_PORT", 8884), ("WS_PORT", 8083)):
        assert f"127.0.0.1:${{{var}:-{port}}}:{port}" in block, var
    assert "*secrets" in block  # the files init-tls makes, read-only


def vernemq_http_listener_is_the_start_scripts_own():
    # bin/vernemq.sh adds listener.http.metrics = <container ip>:8888 unless
    # DOCKER_VERNEMQ_LISTENER__HTTP__METRICS is set; a 0.0.0.0:8888 listener beside it fails (eaddrinuse).
    names = [k for k, _ in env_file("vernemq")]
    http = [n for n in names if n.startswith("DOCKER_VERNEMQ_LISTENER__HTTP")]
    assert not http, f"{http}: the start script's listener.http.metrics already serves /metrics on :8888"
    m = broker_facts.load("vernemq")["metrics"]
    url = urlsplit(m["endpoint"])
    assert (url.port, url.path) == (8888, "/metrics")
    assert "127.0.0.1:${VERNEMQ_HTTP_PORT:-8888}:8888" in compose_service("vernemq")


def vernemq_vm_limits_hold_a_million_connections():
    # The image's vm.args: +P 512000, +Q 512000; a connection is a port and two
    # processes (connection, queue); the start script rewrites +P/+Q from these.
    env = dict(env_file("vernemq"))
    assert int(env["DOCKER_VERNEMQ_ERLANG__MAX_PORTS"]) >= 1_000_000
    assert int(env["DOCKER_VERNEMQ_ERLANG__PROCESS_LIMIT"]) >= 2 * 1_000_000 + 100_000
    assert int(env["DOCKER_VERNEMQ_LISTENER__MAX_CONNECTIONS"]) >= 1_000_000


def vernemq_healthcheck_is_the_images_own():
    # Dockerfile: HEALTHCHECK CMD vernemq ping | grep -q pong (PATH has /vernemq/bin);
    # nodetool prints "pong" only when the node answers.
    block = compose_service("vernemq")
    assert "vernemq ping | grep -q pong" in block
    if "entrypoint:" in block:  # the image has no ENTRYPOINT, only CMD ["start_vernemq"]
        assert "start_vernemq" in block


def vernemq_eula_flag_is_left_to_the_user():
    # DOCKER_VERNEMQ_ACCEPT_EULA=yes becomes accept_eula=yes; the check itself is
    # in the binary package (not in the public source at 2.1.1).
    assert "DOCKER_VERNEMQ_ACCEPT_EULA" not in dict(env_file("vernemq"))
    assert vernemq_conf_line("DOCKER_VERNEMQ_ACCEPT_EULA", "yes") == "accept_eula=yes"


def broker_facts_state_the_upstream_defaults():
    checked = 0
    for broker, settings in (("emqx", EMQX_SETTINGS), ("vernemq", VMQ_SETTINGS)):
        for row in broker_facts.load(broker)["changes"]:
            for key in re.findall(r"`([^`]+)`", row["setting"]):
                if key in settings:
                    default, checked = settings[key][1], checked + 1
                    assert default in row["default"], (
                        f"{broker} {key}: upstream default {default}, not {row['default']}"
                    )
    assert checked >= 15


# (what, citation, check): each fact read upstream, where, and how our files must agree.
FACTS = [
    ("EMQX variables name settings of 5.8.6, with valid values", f"{HOCON} src/hocon_tconf.erl; {SCHEMA}",
     emqx_variables_name_settings_of_the_pinned_version),
    ("EMQX listens for TLS, mutual TLS and WebSocket on the ports compose publishes", f"{SCHEMA} (listeners, "
     "mqtt_ssl_listener, mqtt_ws_listener, ws_opts mqtt_path, base_listener, to_ip_port, default_listener, "
     "common_ssl_opts_schema, server_ssl_opts_schema, validate_server_ssl_opts); rel/config/examples/"
     "listeners.ssl.conf.example, listeners.ws.conf.example, v5.8.6; tests/scenarios/test_tls.py, "
     "test_websocket.py (what our client sends: subprotocol mqtt)",
     emqx_listens_for_tls_mutual_tls_and_websocket_where_compose_publishes),
    ("EMQX secrets come from the secrets volume through a wrapper, not from a file", f"{EMQX} "
     "deploy/docker/docker-entrypoint.sh (no *_FILE), apps/emqx_dashboard/src/emqx_dashboard_schema.erl "
     "(default_password: binary()), apps/emqx/src/emqx_schema_secret.erl (file:// only there)",
     emqx_secrets_are_exported_by_a_wrapper_not_listed_in_the_env_file),
    ("EMQX secrets survive HOCON parsing and the unquoted -setcookie", f"{HOCON} src/hocon_tconf.erl (parse_env); "
     f"{EMQX} bin/emqx (relx_nodetool)", emqx_generated_secrets_are_plain_alphanumerics),
    ("EMQX node name is ours, not the container ip", f"{EMQX} deploy/docker/docker-entrypoint.sh",
     emqx_node_name_is_kept_by_the_images_entrypoint),
    ("EMQX image ENTRYPOINT/CMD kept under compose", f"{EMQX} deploy/docker/Dockerfile (ENTRYPOINT "
     '["/usr/bin/docker-entrypoint.sh"], CMD ["/opt/emqx/bin/emqx", "foreground"], FROM debian:12-slim)',
     emqx_compose_runs_the_images_entrypoint_and_command),
    ("EMQX healthcheck", f"{EMQX} bin/emqx (ctl, non-boot commands), bin/nodetool (rpc_infinity), "
     "apps/emqx_management/src/emqx_mgmt_cli.erl (status)", emqx_healthcheck_is_the_release_script),
    ("EMQX Prometheus endpoint", f"{EMQX} apps/emqx_prometheus/src/emqx_prometheus_api.erl (paths, security), "
     "apps/emqx_dashboard/etc/emqx_dashboard.conf (http.bind = 18083)",
     emqx_prometheus_stats_are_scraped_from_the_dashboard_listener_without_auth),
    ("VerneMQ variables become known vernemq.conf lines", f"{DOCKER_VMQ} bin/vernemq.sh; {VMQ_SCHEMA}; "
     f"{CUTTLEFISH} src/cuttlefish_conf.erl (last value wins)", vernemq_variables_become_known_vernemq_conf_lines),
    ("VerneMQ listens for TLS, mutual TLS and WebSocket on the ports compose publishes", f"{VMQ_SCHEMA} "
     "(listener.ssl.$name, listener.ws.$name, listener.ssl.cafile/certfile/keyfile, "
     "listener.ssl.$name.require_certificate, validators file-is-pem); apps/vmq_server/src/vmq_schema.erl "
     "(extract/4: protocol-level values are each listener's default), apps/vmq_server/src/vmq_ssl.erl (opts/1), "
     "apps/vmq_server/src/vmq_ranch_config.erl (dispatch: \"/mqtt\"), apps/vmq_server/src/vmq_websocket.erl "
     f"(SUPPORTED_PROTOCOLS mqtt); {DOCKER_VMQ} bin/vernemq.sh (configure_vernemq_listeners, listener.ws.default)",
     vernemq_listens_for_tls_mutual_tls_and_websocket_where_compose_publishes),
    ("VerneMQ metrics on the start script's HTTP listener", f"{DOCKER_VMQ} bin/vernemq.sh; {VMQ} "
     "apps/vmq_server/src/vmq_metrics_http.erl, apps/vmq_server/src/vmq_http_config.erl",
     vernemq_http_listener_is_the_start_scripts_own),
    ("VerneMQ Erlang limits hold 1M connections", f"{DOCKER_VMQ} files/vm.args, bin/vernemq.sh; {CUTTLEFISH} "
     "src/cuttlefish_escript.erl (an existing etc/vm.args is used as is)",
     vernemq_vm_limits_hold_a_million_connections),
    ("VerneMQ healthcheck", f"{DOCKER_VMQ} Dockerfile (HEALTHCHECK, CMD); {VMQ} files/nodetool (ping)",
     vernemq_healthcheck_is_the_images_own),
    ("VerneMQ EULA flag", f"{DOCKER_VMQ} README.md, bin/vernemq.sh; vernemq/vmq-docs 2.1.0 "
     "installation/accepting-the-vernemq-eula.md; vernemq/docker-vernemq issue #178",
     vernemq_eula_flag_is_left_to_the_user),
    ("broker.toml defaults are upstream's", f"{SCHEMA}; {CONF_SCHEMA}; {VMQ_SCHEMA}; {VMQ_VARS}",
     broker_facts_state_the_upstream_defaults),
]  # fmt: skip


@pytest.mark.parametrize(("what", "citation", "check"), FACTS, ids=[f[0] for f in FACTS])
def test_our_config_agrees_with_upstream(what, citation, check):
    assert citation, what
    check()


def test_the_verified_versions_are_the_pinned_images():
    env = (ROOT / ".env").read_text()
    for var, image in VERIFIED_IMAGES.items():
        assert re.search(rf"^{var}={re.escape(image)}$", env, re.M), f"{var} is no longer {image}: verify it again"


def test_the_variable_mappings_follow_the_images_scripts():
    assert emqx_path("EMQX_LISTENERS__TCP__DEFAULT__MAX_CONNECTIONS") == "listeners.tcp.default.max_connections"
    assert vernemq_conf_line("DOCKER_VERNEMQ_LOG__CONSOLE__LEVEL", "warning") == "log.console.level=warning"
    assert vernemq_conf_line("DOCKER_VERNEMQ_DISCOVERY_NODE", "10.0.0.1") is None


@pytest.mark.parametrize("broker", ["emqx", "vernemq"])
def test_readme_says_what_was_run_and_what_only_read(broker):
    text = (ROOT / f"brokers/{broker}/README.md").read_text()
    section = text.partition("## Verified against upstream")[2]
    assert section, f"brokers/{broker}/README.md has no 'Verified against upstream' section"
    assert "was run" in section and "does not run in this workplace's tests" in section
    assert "tests/brokers/test_broker_captures.py" in section and "scripts/conformance.sh" in section
    assert "| fact | our value | upstream source |" in section


# ---- tuning for benchmarks: what each broker's own docs recommend -----------
# Each row: a setting the broker's docs recommend for benchmarking or
# performance, the docs' value, whether our config adopts it, and the docs'
# page. The setting's name and value syntax are verified in the source above
# (EMQX_SETTINGS / VMQ_SETTINGS); "## Tuning for benchmarks" in the broker's
# README says why each is or is not adopted, and what is given up.

EMQX_DOCS = "emqx/emqx-docs release-5.8 (9046f8cbf5e9) en_US/performance/tune.md"
VMQ_DOCS = "vernemq/vmq-docs 2.1.0 (e69b3b3db7ca)"

EMQX_TUNING = [
    ("listeners.tcp.default.acceptors", "64", True, f"{EMQX_DOCS} (EMQX Tuning)"),
    ("listeners.tcp.default.max_connections", "1024000", True, f"{EMQX_DOCS} (EMQX Tuning)"),
    # Not adopted: ports beyond the container's open-files limit (1048576) cannot be used.
    ("node.max_ports", "2097152", False, f"{EMQX_DOCS} (Erlang VM Tuning)"),
]
VMQ_TUNING = [
    ("leveldb.maximum_memory.percent", "20", True, f"{VMQ_DOCS} configuration/storage.md"),
]


def tuning_rows(broker):
    """The rows of the README's "Tuning for benchmarks" table: first cell -> cells."""
    text = (ROOT / f"brokers/{broker}/README.md").read_text()
    section = text.partition("## Tuning for benchmarks")[2].partition("\n## ")[0]
    assert section, f"brokers/{broker}/README.md has no 'Tuning for benchmarks' section"
    assert "not measured here" in section, "say that the figures are the docs', not measured here"
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| `") and len(cells) >= 6:
            rows[cells[0]] = cells
    return rows


@pytest.mark.parametrize(
    ("broker", "tuning", "ours"),
    [
        ("emqx", EMQX_TUNING, lambda: {emqx_path(k): v for k, v in env_file("emqx")}),
        ("vernemq", VMQ_TUNING, lambda: dict(vernemq_conf_line(k, v).split("=", 1) for k, v in env_file("vernemq"))),
    ],
    ids=["emqx", "vernemq"],
)
def test_tuning_follows_the_brokers_own_docs(broker, tuning, ours):
    settings, rows, conf = (EMQX_SETTINGS if broker == "emqx" else VMQ_SETTINGS), tuning_rows(broker), ours()
    for key, docs_value, adopted, citation in tuning:
        assert citation
        row = next((cells for first, cells in rows.items() if f"`{key}`" in first), None)
        assert row, f"{broker}: the docs' {key} = {docs_value} is not in the README's tuning table"
        assert row[3].startswith("yes" if adopted else "no"), f"{broker} {key}: adopted is {adopted}"
        if adopted:
            assert conf.get(key) == docs_value, f"{broker}: {key} = {docs_value} ({citation}) is not set"
            assert key in settings, f"{key}: verify it in the source before adopting it"
        else:
            assert conf.get(key) != docs_value
