"""NanoMQ and Mosquitto as this project configures them, held against each
broker's upstream source at the version .env pins (emqx/nanomq:0.23.10-slim,
eclipse-mosquitto:2.0.22). No image can be pulled here: each FACTS row is one
behaviour of the broker, the source it was read in (repository, path, tag or
commit), and the check of our files against it.

Mosquitto also runs here, from Debian (2.0.11, scripts/setup/debian.sh): what
a binary can show (our config parses, the $SYS topics Telegraf reads are
published, the compose healthcheck command works, MQTT 5 and shared
subscriptions) is checked for real, on a free loopback port."""

import json
import re
import subprocess
import tomllib

import pytest

from conftest import ROOT
from loopback_brokers import project_mosquitto
from mqtt_wire import Client, connack_properties

# Where each fact was read. The nng submodule of nanomq 0.23.10 is pinned at
# NanoNNG aa549c2db39d; the official eclipse-mosquitto 2.0.x images are
# built from docker/2.0-openssl (docker-library/official-images,
# library/eclipse-mosquitto), updated for 2.0.22 in commit ff1187fd9c74.
NMQ = "nanomq/nanomq@0.23.10 (f22bae70b1a8)"
NNG = "nanomq/NanoNNG@aa549c2db39d (nanomq 0.23.10's nng submodule)"
MQ = "eclipse-mosquitto/mosquitto@v2.0.22 (766fa2c5a9be)"
MQ_OLD = "eclipse-mosquitto/mosquitto@v2.0.11"
MQ_IMAGE = "eclipse-mosquitto/mosquitto@ff1187fd9c74 docker/2.0-openssl/Dockerfile (Update Dockerfile for 2.0.22)"

ENV = (ROOT / ".env").read_text()
COMPOSE = (ROOT / "compose.yaml").read_text()
NANOMQ_CONF = (ROOT / "brokers/nanomq/nanomq.conf").read_text()
MOSQUITTO_CONF = (ROOT / "brokers/mosquitto/mosquitto.conf").read_text()
TELEGRAF_NANOMQ = (ROOT / "telegraf/brokers/nanomq.conf").read_text()
TELEGRAF_MOSQUITTO = (ROOT / "telegraf/brokers/mosquitto.conf").read_text()


def facts(name):
    with (ROOT / f"brokers/{name}/broker.toml").open("rb") as f:
        return tomllib.load(f)


def compose_service(name):
    """The text of one service of compose.yaml as written: the checks look for its literal lines."""
    m = re.search(rf"^  {name}:\n(.*?)(?=^  [a-z][\w-]*:\n|^\S)", COMPOSE, re.M | re.S)
    assert m, f"no service {name} in compose.yaml"
    return m.group(1)


def hocon(text):
    """Our nanomq.conf (blocks, `key = value`, comments) as {dotted key: raw value}."""
    flat, stack = {}, []
    for raw in text.splitlines():
        line = raw.strip() if '"' in raw else raw.split("#")[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("{"):
            stack.append(line[:-1].strip())
        elif line == "}":
            stack.pop()
        else:
            key, value = (s.strip() for s in line.split("=", 1))
            flat[".".join([*stack, key])] = value
    assert not stack, "unbalanced braces"
    return flat


NANOMQ = hocon(NANOMQ_CONF)

# ---- NanoMQ 0.23.10 ------------------------------------------------------

# What conf_parse_ver2 reads, by the kind of value its hocon_read_* macro
# accepts (a number, a string with a unit, true/false, one of an enum), for
# the blocks we use; a key it does not read is silently ignored.
NUMBER, SIZE, DURATION, BOOL, STRING = r"\d+(\.\d+)?", r"\d+(KB|MB|GB)", r"\d+(ms|s|m|h|d)", r"true|false", r'"?[^"]+"?'
NANOMQ_KEYS = {
    "system.num_taskq_thread": NUMBER,
    "system.max_taskq_thread": NUMBER,
    "system.parallel": NUMBER,
    "mqtt.property_size": NUMBER,
    "mqtt.max_packet_size": SIZE,
    "mqtt.max_mqueue_len": NUMBER,
    "mqtt.retry_interval": DURATION,
    "mqtt.keepalive_multiplier": NUMBER,
    "listeners.tcp.bind": r'"[\d.]+:\d+"',
    "listeners.tcp.enable": BOOL,
    # conf_tls_parse_ver2: each object in listeners.ssl with a bind is one TLS listener
    # (config->tls_list); conf_tls_parse_ver2_base reads the files.
    **{
        f"listeners.ssl.{name}.{key}": pattern
        for name in ("tls", "mtls")
        for key, pattern in (
            ("bind", r'"[\d.]+:\d+"'),
            ("keyfile", STRING),
            ("certfile", STRING),
            ("cacertfile", STRING),
            ("verify_peer", BOOL),
            ("fail_if_no_peer_cert", BOOL),
        )
    },
    # conf_basic_parse_ver2: the bind's path is the WebSocket path.
    "listeners.ws.bind": r'"[\d.]+:\d+/[\w/]+"',
    "http_server.port": NUMBER,
    "http_server.ip_addr": STRING,
    "http_server.limit_conn": NUMBER,
    "http_server.max_body": NUMBER,
    "http_server.username": STRING,
    "http_server.password": STRING,
    "http_server.auth_type": r"basic|jwt|no_auth",
    "auth.allow_anonymous": BOOL,
    "auth.enable": BOOL,
    "auth.no_match": r"allow|deny",
    "auth.deny_action": r"ignore|disconnect",
    "log.to": r"\[\s*(file|console|syslog|uds)(\s*,\s*(file|console|syslog|uds))*\s*\]",
    "log.level": r"trace|debug|info|warn|error|fatal",
    "log.dir": STRING,
    "log.file": STRING,
}
# Parsed into the config (conf_init: 2048, 10, 10) but read by nothing else.
NANOMQ_UNUSED = ["mqtt.max_inflight_window", "mqtt.max_awaiting_rel", "mqtt.await_rel_timeout"]
# env.h: the variables read_env_conf reads, after the file (they win).
NANOMQ_ENV = {
    "NANOMQ_BROKER_URL", "NANOMQ_DAEMON", "NANOMQ_TCP_ENABLE", "NANOMQ_MAX_TASKQ_THREAD", "NANOMQ_PARALLEL",
    "NANOMQ_PROPERTY_SIZE", "NANOMQ_MAX_PACKET_SIZE", "NANOMQ_CLIENT_MAX_PACKET_SIZE", "NANOMQ_MSQ_LEN",
    "NANOMQ_QOS_DURATION", "NANOMQ_ALLOW_ANONYMOUS", "NANOMQ_WEBSOCKET_ENABLE", "NANOMQ_WEBSOCKET_TLS_ENABLE",
    "NANOMQ_WEBSOCKET_URL", "NANOMQ_WEBSOCKET_TLS_URL", "NANOMQ_HTTP_SERVER_URL", "NANOMQ_HTTP_SERVER_ENABLE",
    "NANOMQ_HTTP_SERVER_PORT", "NANOMQ_HTTP_SERVER_PARALLEL", "NANOMQ_HTTP_SERVER_USERNAME",
    "NANOMQ_HTTP_SERVER_PASSWORD", "NANOMQ_HTTP_SERVER_AUTH_TYPE", "NANOMQ_HTTP_SERVER_JWT_PUBLIC_KEYFILE",
    "NANOMQ_HTTP_SERVER_JWT_PRIVATE_KEYFILE", "NANOMQ_TLS_ENABLE", "NANOMQ_TLS_URL", "NANOMQ_TLS_CA_CERT_PATH",
    "NANOMQ_TLS_CERT_PATH", "NANOMQ_TLS_KEY_PATH", "NANOMQ_TLS_KEY_PASSWORD", "NANOMQ_TLS_VERIFY_PEER",
    "NANOMQ_TLS_FAIL_IF_NO_PEER_CERT", "NANOMQ_LOG_LEVEL", "NANOMQ_LOG_TO", "NANOMQ_LOG_UDS_ADDR", "NANOMQ_LOG_DIR",
    "NANOMQ_LOG_FILE", "NANOMQ_LOG_ROTATION_SIZE", "NANOMQ_LOG_ROTATION_COUNT", "NANOMQ_CONF_PATH", "NANOMQ_VIN",
    "NANOMQ_PID_FILE",
}  # fmt: skip
# Our own variables of that prefix (the image pin, the published port, Telegraf's).
PROJECT_NANOMQ_VARS = {"NANOMQ_IMAGE", "NANOMQ_HTTP_PORT", "NANOMQ_METRICS_URL", "NANOMQ_HTTP_USERNAME",
                       "NANOMQ_HTTP_PASSWORD"}  # fmt: skip
NANOMQ_IMAGE_ENTRYPOINT = "/usr/bin/docker-entrypoint.sh"


def check_pinned_nanomq():
    assert re.search(r"^NANOMQ_IMAGE=emqx/nanomq:0\.23\.10-slim$", ENV, re.M), "re-verify NanoMQ for a new image"


def check_config_path():
    assert "./brokers/nanomq/nanomq.conf:/etc/nanomq.conf:ro" in compose_service("nanomq")


def check_keys_are_read():
    unread = sorted(set(NANOMQ) - set(NANOMQ_KEYS))
    assert not unread, f"NanoMQ 0.23.10 ignores {unread}"


def check_value_types():
    for key, value in NANOMQ.items():
        assert re.fullmatch(NANOMQ_KEYS[key], value), f"{key} = {value}: not what NanoMQ reads there"


def check_unused_keys_not_set():
    assert not [k for k in NANOMQ_UNUSED if k in NANOMQ]


def check_limits():
    assert int(NANOMQ["mqtt.max_mqueue_len"]) >= 100000
    size = (
        int(NANOMQ["mqtt.max_packet_size"][:-2])
        * {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}[NANOMQ["mqtt.max_packet_size"][-2:]]
    )
    assert 1 <= size <= 260 << 20


def check_http_server():
    assert NANOMQ["http_server.port"] == "8081" and NANOMQ["http_server.auth_type"] == "basic"
    # Basic auth formats username:password: both must be set, the password never here.
    assert NANOMQ["http_server.username"] == "admin" and "http_server.password" not in NANOMQ


def check_env_names():
    given = set(re.findall(r"\bNANOMQ_[A-Z_]+\b", COMPOSE)) - PROJECT_NANOMQ_VARS
    assert given <= NANOMQ_ENV, f"NanoMQ 0.23.10 reads no {sorted(given - NANOMQ_ENV)}"
    assert "NANOMQ_HTTP_SERVER_PASSWORD" in COMPOSE


def check_metrics_endpoint():
    m = facts("nanomq")["metrics"]
    url = f"http://nanomq:{NANOMQ['http_server.port']}/api/v4/prometheus"
    assert m["endpoint"] == url and url in COMPOSE
    assert f":{NANOMQ['http_server.port']}/api/v4/prometheus" in TELEGRAF_NANOMQ
    assert f'username = "${{NANOMQ_HTTP_USERNAME:-{NANOMQ["http_server.username"]}}}"' in TELEGRAF_NANOMQ


def check_tls_and_websocket_listeners():
    tls = "/run/secrets/mqtt-bench/tls"
    ssl = {k.removeprefix("listeners.ssl."): v for k, v in NANOMQ.items() if k.startswith("listeners.ssl.")}
    # Named listeners only: a bind at listeners.ssl itself would be config->tls, which also
    # starts a secure WebSocket listener on 8086 (broker_start: websocket.tls_enable is always set).
    assert {k.split(".")[0] for k in ssl} == {"tls", "mtls"} and "listeners.ssl.bind" not in NANOMQ
    for name, port in (("tls", 8883), ("mtls", 8884)):
        assert ssl[f"{name}.bind"] == f'"0.0.0.0:{port}"'
        files = (ssl[f"{name}.{k}"] for k in ("keyfile", "certfile", "cacertfile"))
        assert list(files) == [f'"{tls}/server.key"', f'"{tls}/server.pem"', f'"{tls}/ca.pem"']
    # init_listener_tls: verify_peer and fail_if_no_peer_cert -> NNG_TLS_AUTH_MODE_REQUIRED.
    assert ssl["mtls.verify_peer"] == ssl["mtls.fail_if_no_peer_cert"] == "true"
    assert "tls.verify_peer" not in ssl  # NNG_TLS_AUTH_MODE_NONE
    assert NANOMQ["listeners.ws.bind"] == '"0.0.0.0:8083/mqtt"'
    service = compose_service("nanomq")
    for var, port in (("MQTTS_PORT", 8883), ("MTLS_PORT", 8884), ("WS_PORT", 8083)):
        assert f"127.0.0.1:${{{var}:-{port}}}:{port}" in service, var
    assert "*secrets" in service


def check_defaults_claimed():
    rows = {c["setting"]: c["default"] for c in facts("nanomq")["changes"]}
    assert rows["`mqtt.max_mqueue_len`"].startswith("20480 built in (2048 in the image's own")
    assert rows["`auth.allow_anonymous`"] == "true"
    assert rows["`http_server`"].startswith("off built in")
    assert rows["log"].startswith("warn to console built in")


NANOMQ_FACTS = [
    ("facts_are_for_the_pinned_image", f"{NMQ} .github/workflows/build_packages.yaml (tag suffix -slim)",
     check_pinned_nanomq),
    ("reads_etc_nanomq_conf",
     f"{NNG} include/nng/supplemental/nanolib/conf.h CONF_PATH_NAME; {NMQ} nanomq/apps/broker.c broker_start "
     "(no --conf: that path, HOCON); deploy/docker/Dockerfile-slim (ENTRYPOINT docker-entrypoint.sh, no CMD: "
     "`nanomq start`)", check_config_path),
    ("every_key_we_set_is_read",
     f"{NNG} src/supplemental/nanolib/conf_ver2.c conf_basic_parse_ver2, conf_http_server_parse_ver2, "
     "conf_log_parse_ver2", check_keys_are_read),
    ("values_have_the_type_read",
     f"{NNG} src/supplemental/nanolib/conf_ver2.c hocon_read_num/size/time/bool/enum (http_server_auth_type, "
     "auth_acl_permit, auth_deny_action); conf.c get_size, get_time", check_value_types),
    ("no_inflight_window_exists",
     f"{NNG} src/supplemental/nanolib/conf.c conf_init, print_conf (the only readers); {NMQ} "
     "docs/en_US/config-description/mqtt.md (Upcoming Features), etc/nanomq.conf (\"unsupported now\")",
     check_unused_keys_not_set),
    ("queue_and_packet_limits",
     f"{NNG} src/sp/protocol/mqtt/nmq_mqtt.c nano_pipe_init (rlmq of msq_len), nano_ctx_send (dropped when full); "
     f"{NMQ} docs/en_US/config-description/mqtt.md (max_packet_size 1 B to 260 MB)", check_limits),
    ("http_server_on_with_basic_auth",
     f"{NNG} conf_ver2.c conf_http_server_parse_ver2 (the block enables it), conf.c conf_http_server_init "
     f"(off, 8081, no credentials); {NMQ} nanomq/rest_api.c basic_authorize (strlen of username and password)",
     check_http_server),
    ("environment_names_are_read", f"{NNG} include/nng/supplemental/nanolib/env.h, src/supplemental/nanolib/env.c "
     f"read_env_conf; {NMQ} nanomq/apps/broker.c broker_start (env after the file)", check_env_names),
    ("prometheus_at_api_v4", f"{NMQ} nanomq/include/rest_api.h REST_URI_ROOT; nanomq/rest_api.c process_request, "
     "get_prometheus; nanomq/include/web_server.h HTTP_DEFAULT_ADDR 0.0.0.0", check_metrics_endpoint),
    ("tls_mutual_tls_and_websocket_listeners",
     f"{NNG} src/supplemental/nanolib/conf_ver2.c conf_tls_parse_ver2 (single listener, then \"parsing for "
     "multiple listener\": every object in listeners.ssl with a bind), conf_tls_parse_ver2_base, "
     "conf_basic_parse_ver2 (listeners.ws bind -> nmq-ws://), src/sp/transport/mqttws/nmq_websocket.c "
     "wstran_listener_init (subprotocol mqtt), src/supplemental/websocket/websocket.c (a missing or other "
     f"subprotocol is refused), include/nng/supplemental/nanolib/conf.h (CONF_WSS_URL_DEFAULT); {NMQ} "
     "nanomq/apps/broker.c broker_start (tls_list, tls, websocket listeners), nanomq/mqtt_api.c "
     "init_listener_tls (verify_peer + fail_if_no_peer_cert: NNG_TLS_AUTH_MODE_REQUIRED), "
     "docs/en_US/config-description/listener.md, deploy/docker/Dockerfile-slim (NNG_ENABLE_TLS=ON)",
     check_tls_and_websocket_listeners),
    ("defaults_we_claim", f"{NNG} src/supplemental/nanolib/conf.c conf_init, conf_log_init, conf_http_server_init; "
     f"{NMQ} etc/nanomq.conf (the image's /etc/nanomq.conf)", check_defaults_claimed),
]  # fmt: skip


@pytest.mark.parametrize("what,citation,check", NANOMQ_FACTS, ids=[f[0] for f in NANOMQ_FACTS])
def test_nanomq_config_is_what_nanomq_0_23_10_reads(what, citation, check):
    check()


# compose.yaml held to the image: a healthcheck that can pass, the image's own entrypoint.
def test_nanomq_healthcheck_can_pass_in_the_slim_image():
    citation = (
        f"{NMQ} deploy/docker/Dockerfile-slim (debian:11-slim plus libmbedtls-dev and libatomic1: no wget); "
        "nanomq_cli/client.c client_cb (`pub` exits 1 after its last message is sent)"
    )
    health = re.search(r"healthcheck:(.*)", compose_service("nanomq"), re.S).group(1)
    assert "wget" not in health and "nanomq_cli" not in health, citation


def test_nanomq_wrapped_entrypoint_execs_the_images_own():
    citation = f'{NMQ} deploy/docker/Dockerfile-slim (ENTRYPOINT ["{NANOMQ_IMAGE_ENTRYPOINT}"], no CMD)'
    service = compose_service("nanomq")
    m = re.search(r"entrypoint:(.*?)\n    \w", service, re.S)
    assert not m or NANOMQ_IMAGE_ENTRYPOINT in m.group(1), citation
    assert not m or re.search(r"command: \[nanomq, start\]", service), citation


# ---- Mosquitto 2.0.22 ----------------------------------------------------

# man/mosquitto.conf.5.xml: the options we use (global and bridge).
MOSQUITTO_OPTIONS = {
    "listener", "allow_anonymous", "sys_interval", "max_inflight_messages", "max_queued_messages",
    "max_queued_bytes", "set_tcp_nodelay", "persistence", "log_dest", "log_type", "connection_messages",
    "connection", "address", "topic", "try_private", "cleansession", "bridge_protocol_version",
    "bridge_max_packet_size",
    # The TLS and WebSocket listeners' (Debian's 2.0.11 runs them: tests/scenarios/test_tls.py, test_websocket.py).
    "cafile", "certfile", "keyfile", "require_certificate", "protocol",
    # The WebSocket listener's: 2.0.11 binds it to its address only with IPv6 off.
    "socket_domain",
}  # fmt: skip
# src/conf.c config__init.
MOSQUITTO_DEFAULTS = {
    "sys_interval": "10", "max_inflight_messages": "20", "max_queued_messages": "1000", "max_queued_bytes": "0",
    "set_tcp_nodelay": "false", "persistence": "false",
}  # fmt: skip
# src/sys_tree.c: the $SYS topics 2.0.22 publishes (the same names in 2.0.11).
MOSQUITTO_SYS = {
    f"$SYS/broker/{t}"
    for t in (
        "bytes/received bytes/sent clients/active clients/connected clients/disconnected clients/expired "
        "clients/inactive clients/maximum clients/total heap/current heap/maximum messages/received messages/sent "
        "messages/stored publish/bytes/received publish/bytes/sent publish/messages/dropped "
        "publish/messages/received publish/messages/sent shared_subscriptions/count store/messages/bytes "
        "store/messages/count subscriptions/count uptime version"
    ).split()
} | {
    f"$SYS/broker/load/{what}/{window}"
    for what in (
        "bytes/received bytes/sent connections messages/received messages/sent publish/dropped publish/received "
        "publish/sent sockets"
    ).split()
    for window in ("1min", "5min", "15min")
}


def options(text):
    return [line.split()[0] for line in text.splitlines() if line.strip() and not line.startswith("#")]


def sys_topics():
    return re.findall(r'"(\$SYS/[^"]+)"', TELEGRAF_MOSQUITTO)


def check_pinned_mosquitto():
    assert re.search(r"^MOSQUITTO_IMAGE=eclipse-mosquitto:2\.0\.22$", ENV, re.M), "re-verify for a new image"


def check_mosquitto_config_path():
    assert "./brokers/mosquitto/mosquitto.conf:/mosquitto/config/mosquitto.conf:ro" in compose_service("mosquitto")


def check_options_documented():
    used = set(options(MOSQUITTO_CONF)) | set(options((ROOT / "brokers/mosquitto/bridge.conf").read_text()))
    assert used <= MOSQUITTO_OPTIONS, sorted(used - MOSQUITTO_OPTIONS)


def check_mosquitto_defaults():
    rows = {c["setting"].strip("`"): c["default"] for c in facts("mosquitto")["changes"]}
    for option, default in MOSQUITTO_DEFAULTS.items():
        assert rows[option] == default, option
    assert "stderr" in rows["logging"] and "information" in rows["logging"]


def check_inflight_fits():
    value = int(re.search(r"^max_inflight_messages (\d+)$", MOSQUITTO_CONF, re.M).group(1))
    assert 0 < value <= 65535  # a uint16_t, and the MQTT 5 Receive Maximum


def check_sys_topics_exist():
    assert set(sys_topics()) <= MOSQUITTO_SYS, sorted(set(sys_topics()) - MOSQUITTO_SYS)
    assert set(facts("mosquitto")["metrics"]["series"].values()) <= set(sys_topics())


def check_heap_caveat_documented():
    # memory_mosq.h: REAL_WITH_MEMORY_TRACKING needs glibc (or macOS, FreeBSD); the image is Alpine (musl).
    assert "heap/current" in (ROOT / "brokers/mosquitto/README.md").read_text().split("## Verified against upstream")[1]


def check_healthcheck_in_image():
    assert '"CMD", "mosquitto_sub", "-t", "mqtt-bench/healthcheck", "-E"' in compose_service("mosquitto")


def check_nothing_written():
    # As root the entrypoint chowns /mosquitto; mosquitto drops to the user mosquitto (1883) after the config:
    # with no persistence, no log file and no `user`, nothing needs to be writable.
    opts = dict(line.split(None, 1) for line in MOSQUITTO_CONF.splitlines() if line.strip() and line[0] != "#")
    assert opts["persistence"] == "false" and opts["log_dest"] == "stdout" and "user" not in opts


MOSQUITTO_FACTS = [
    ("facts_are_for_the_pinned_image", f"{MQ_IMAGE}; docker-library/official-images library/eclipse-mosquitto",
     check_pinned_mosquitto),
    ("reads_mosquitto_config_mosquitto_conf", f"{MQ_IMAGE} (CMD /usr/sbin/mosquitto -c "
     "/mosquitto/config/mosquitto.conf)", check_mosquitto_config_path),
    ("every_option_is_documented", f"{MQ} man/mosquitto.conf.5.xml", check_options_documented),
    ("defaults_we_claim", f"{MQ} src/conf.c config__init; man/mosquitto.conf.5.xml", check_mosquitto_defaults),
    ("inflight_limit_fits", f"{MQ} src/conf.c (max_inflight_messages, uint16_t); src/send_connack.c "
     "(MQTT_PROP_RECEIVE_MAXIMUM)", check_inflight_fits),
    ("sys_topics_exist", f"{MQ} src/sys_tree.c; {MQ_OLD} src/sys_tree.c (the same names)", check_sys_topics_exist),
    ("heap_is_not_published_by_the_alpine_image", f"{MQ} lib/memory_mosq.h (REAL_WITH_MEMORY_TRACKING), "
     f"sys_tree.c sys_tree__update_memory; {MQ_IMAGE} (FROM alpine:3.22)", check_heap_caveat_documented),
    ("healthcheck_client_is_in_the_image", f"{MQ_IMAGE} (install mosquitto_sub /usr/bin/mosquitto_sub)",
     check_healthcheck_in_image),
    ("needs_no_writable_path", f"{MQ_IMAGE}; docker/2.0-openssl/docker-entrypoint.sh; {MQ} "
     "src/mosquitto.c main (drop_privileges after the config); man/mosquitto.conf.5.xml (user, persistence, "
     "log_dest)", check_nothing_written),
]  # fmt: skip


@pytest.mark.parametrize("what,citation,check", MOSQUITTO_FACTS, ids=[f[0] for f in MOSQUITTO_FACTS])
def test_mosquitto_config_is_what_mosquitto_2_0_22_reads(what, citation, check):
    check()


def test_every_fact_is_cited_and_distinct():
    for table in (NANOMQ_FACTS, MOSQUITTO_FACTS):
        assert len({f[0] for f in table}) == len(table)
        assert all(f[1] and f[0].islower() and callable(f[2]) for f in table)


# ---- Debian's Mosquitto, for real ------------------------------------------


@pytest.fixture(scope="module")
def mosquitto(tmp_path_factory):
    """Debian's mosquitto with brokers/mosquitto/mosquitto.conf; yields the port."""
    with project_mosquitto(tmp_path_factory.mktemp("mosquitto")) as (port, _):
        yield port


def config_value(option):
    return int(re.search(rf"^{option} (\d+)$", MOSQUITTO_CONF, re.M).group(1))


def test_debian_mosquitto_accepts_our_config(mosquitto):
    citation = f"{MQ} src/conf.c config__read_file_core (an unknown option or a bad value stops the broker)"
    c = Client(mosquitto, "accepts-config")  # the fixture asserted it kept running
    c.close()
    assert citation


def test_debian_mosquitto_publishes_every_sys_topic_telegraf_reads(mosquitto):
    citation = f"{MQ_OLD} src/sys_tree.c (each topic retained, first published at start; glibc: heap/current too)"
    wanted = set(sys_topics())
    c = Client(mosquitto, "sys-topics")
    c.subscribe("$SYS/broker/#")
    seen = {t for t, _ in c.messages(config_value("sys_interval") + 2, lambda got: wanted <= {t for t, _ in got})}
    c.close()
    assert wanted <= seen, f"not published: {sorted(wanted - seen)} ({citation})"


def test_compose_healthcheck_command_succeeds_against_our_config(mosquitto):
    citation = (
        f"{MQ_IMAGE} (mosquitto_sub in the image); {MQ} ChangeLog.txt 1.6.0 (mosquitto_sub -E: exit once "
        "the subscriptions are acknowledged)"
    )
    test = re.search(r"test: (\[\"CMD\".*\])", compose_service("mosquitto")).group(1)
    argv = [a.replace("$$", "$") for a in json.loads(test)[1:]]
    r = subprocess.run([*argv, "-h", "127.0.0.1", "-p", str(mosquitto)], capture_output=True, text=True, timeout=10)
    # Healthy, and no message delivered: the broker's counters count the load alone.
    assert r.returncode == 0 and r.stdout == "", (r, citation)


def test_mqtt5_clients_get_our_inflight_limit_as_receive_maximum(mosquitto):
    citation = (
        f"{MQ} src/send_connack.c (MQTT_PROP_RECEIVE_MAXIMUM = max_inflight_messages; no Shared Subscription "
        "Available property, which MQTT 5.0 section 3.2.2.3.13 reads as available)"
    )
    c = Client(mosquitto, "receive-maximum")
    props = connack_properties(c.connack)
    c.close()
    assert props.get(0x21) == config_value("max_inflight_messages") and props.get(0x2A, 1) == 1, (props, citation)


def test_shared_subscription_delivers_each_message_to_one_member(mosquitto):
    citation = f"{MQ} src/topic_tok.c, src/subs.c ($share/<group>/<filter>: one member of the group per message)"
    members = [Client(mosquitto, f"share-{i}") for i in range(2)]
    for m in members:
        m.subscribe("$share/bench/upstream-test/#")
    pub = Client(mosquitto, "share-pub")
    sent = [str(i).encode() for i in range(20)]
    for i, payload in enumerate(sent, 1):
        pub.publish_qos1("upstream-test/a", payload, i)
    got = [[p for _, p in m.messages(1.5)] for m in members]
    for c in [*members, pub]:
        c.close()
    assert sorted(got[0] + got[1], key=int) == sent and all(got), (got, citation)
