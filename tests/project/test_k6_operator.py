"""deploy/k6-operator held against what k6-operator documents and does: the
TestRun fields of its CRD, how it starts the runners, the wiring our scenarios
need (archive, image, env, results volume), the CPU a small cluster has for
it, and the archive's size limit. No cluster runs here: the runners' command
lines are replayed as local k6 processes against a real Mosquitto, and the
GitHub job `k6-operator` (.github/workflows/test.yml), which runs the README's
procedure on kind, is held to the README's commands.

Source: grafana/k6-operator v1.6.0, commit cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/config/crd/bases/k6.io_testruns.yaml
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/api/v1alpha1/testrun_types.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/resources/jobs/runner.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/resources/jobs/starter.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/resources/containers/curl_start.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/segmentation/segmentation.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/types/k6cli.go
and https://grafana.com/docs/k6/latest/testing-guides/running-distributed-tests/
(k6-docs docs/sources/k6/next/testing-guides/running-distributed-tests.md)."""

import base64
import hashlib
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest
import requests
import yaml

from conftest import ROOT, loopback_port, wait_until
from loopback_brokers import mosquitto, sys_counters

DEPLOY = ROOT / "deploy/k6-operator"
TESTRUN_FILE = DEPLOY / "testrun.yaml"
KUSTOMIZATION_FILE = DEPLOY / "kustomization.yaml"
README = DEPLOY / "README.md"

# k6.io_testruns.yaml at cf0ae21 (v1.6.0): group k6.io, version v1alpha1, kind TestRun.
API_VERSION = "k6.io/v1alpha1"
KIND = "TestRun"

# Property names per level of the CRD's openAPIV3Schema at cf0ae21 (v1.6.0).
# Left out on purpose: `status` (written by the operator), and spec.testRunId
# and spec.token ("reserved by Grafana Cloud k6. Do not set it manually",
# testrun_types.go).
TOP_FIELDS = {"apiVersion", "kind", "metadata", "spec"}
SPEC_FIELDS = set(
    "script parallelism separate arguments args ports initializer starter runner quiet paused scuttle cleanup".split()
)
SPEC_REQUIRED = {"script", "parallelism"}
SCRIPT_FIELDS = {"configMap", "volumeClaim", "localFile"}
CONFIGMAP_FIELDS = {"name", "file"}
# The Pod type: spec.runner, spec.initializer and spec.starter have the same properties.
POD_FIELDS = set(
    "affinity automountServiceAccountToken containerSecurityContext disabled env envFrom image "
    "imagePullPolicy imagePullSecrets initContainers livenessProbe metadata nodeSelector "
    "priorityClassName readinessProbe resources schedulerName securityContext serviceAccountName "
    "tolerations topologySpreadConstraints volumeMounts volumes".split()
)
POD_METADATA_FIELDS = {"labels", "annotations"}
CLEANUP_VALUES = {"post"}  # +kubebuilder:validation:Enum=post
# Booleans the CRD types as strings ("true"/"false").
SPEC_STRING_BOOLS = {"quiet", "paused"}

# The operator mounts a ConfigMap script at /test (pkg/types/script.go), so
# results cannot go there, and the default runner image (runner.go) lacks our extension.
SCRIPT_MOUNT = "/test"
DEFAULT_RUNNER_IMAGES = {"grafana/k6", "ghcr.io/grafana/k6-operator"}
# The label every runner pod gets: newLabels() in pkg/resources/jobs/helpers.go
# sets app=k6 and k6_cr=<TestRun name>; user labels cannot replace it.
RUN_ID_FIELD_PATH = "metadata.labels['k6_cr']"
# Our scenarios' RUN_ID: letters, digits, . _ - up to 128 characters.
RUN_ID_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def load_testrun():
    return yaml.safe_load(TESTRUN_FILE.read_text())


def kustomization():
    return yaml.safe_load(KUSTOMIZATION_FILE.read_text())


def runner():
    return load_testrun()["spec"]["runner"]


def env():
    return {e["name"]: e for e in runner().get("env", [])}


def resources():
    """The kustomization's resource manifests, by kind."""
    out = {}
    for name in kustomization()["resources"]:
        for doc in yaml.safe_load_all((DEPLOY / name).read_text()):
            out.setdefault(doc["kind"], []).append(doc)
    return out


def archive_generator():
    gens = [g for g in kustomization().get("configMapGenerator", []) if any(".tar" in f for f in g.get("files", []))]
    assert len(gens) == 1, "kustomization.yaml must generate one ConfigMap holding the archive"
    return gens[0]


def generator_keys(gen):
    # kustomize's file source: "path" (key = its base name) or "key=path".
    return {f.split("=", 1)[0] if "=" in f else f.rsplit("/", 1)[-1] for f in gen["files"]}


def test_testrun_is_a_k6_io_v1alpha1_testrun():
    tr = load_testrun()
    assert (tr["apiVersion"], tr["kind"]) == (API_VERSION, KIND)
    assert tr["metadata"]["name"]


def test_testrun_uses_only_fields_the_operator_documents():
    tr = load_testrun()
    problems = []

    def only(where, obj, allowed):
        problems.extend(f"{where}.{k}" for k in set(obj) - allowed)

    only("", tr, TOP_FIELDS)
    spec = tr["spec"]
    only("spec", spec, SPEC_FIELDS)
    assert SPEC_REQUIRED <= set(spec), f"spec needs {sorted(SPEC_REQUIRED)}"
    only("spec.script", spec["script"], SCRIPT_FIELDS)
    assert len(spec["script"]) == 1, "script takes one of configMap, volumeClaim, localFile"
    if "configMap" in spec["script"]:
        only("spec.script.configMap", spec["script"]["configMap"], CONFIGMAP_FIELDS)
    for pod in ("runner", "initializer", "starter"):
        if pod in spec:
            only(f"spec.{pod}", spec[pod], POD_FIELDS)
            only(f"spec.{pod}.metadata", spec[pod].get("metadata", {}), POD_METADATA_FIELDS)
    assert not problems, f"fields k6-operator v1.6.0 does not document: {problems}"
    if "cleanup" in spec:
        assert spec["cleanup"] in CLEANUP_VALUES
    for field in SPEC_STRING_BOOLS:
        if field in spec:
            assert spec[field] in ("true", "false"), f"spec.{field} is a string in the CRD"


def test_testrun_splits_the_load_over_several_runners():
    p = load_testrun()["spec"]["parallelism"]
    assert isinstance(p, int) and not isinstance(p, bool) and p >= 2


def test_script_is_the_archive_the_kustomization_generates():
    cm = load_testrun()["spec"]["script"]["configMap"]
    gen = archive_generator()
    assert cm["name"] == gen["name"]
    assert cm["file"].endswith(".tar") and cm["file"] in generator_keys(gen)
    # Without this kustomize appends a hash to the name, and it does not
    # rewrite a TestRun's spec.script.configMap.name to follow.
    opts = {**kustomization().get("generatorOptions", {}), **gen.get("options", {})}
    assert opts.get("disableNameSuffixHash") is True


def test_runner_image_is_the_one_built_from_k6_dockerfile():
    image = runner()["image"]
    assert image.rsplit(":", 1)[0] not in DEFAULT_RUNNER_IMAGES
    built = re.findall(r"docker build -f k6/Dockerfile -t (\S+) \.", README.read_text())
    assert built, "README.md must show how the runner image is built from k6/Dockerfile"
    assert image in built, f"runner.image {image} is not the image README.md builds ({built})"
    assert "k6/Dockerfile" in TESTRUN_FILE.read_text(), "testrun.yaml must say where its image comes from"
    assert (ROOT / "k6/Dockerfile").is_file()


def test_runner_env_names_the_broker_the_run_and_the_results_dir():
    e = env()
    assert {"MQTT_URL", "RUN_ID", "RESULTS_DIR"} <= set(e)
    assert re.match(r"^mqtts?://[^/]+:\d+$", e["MQTT_URL"]["value"])


def test_every_runner_of_a_testrun_gets_the_same_run_id():
    e = env()["RUN_ID"]
    tr = load_testrun()
    if "value" in e:
        run_id = e["value"]
    else:
        assert e["valueFrom"]["fieldRef"]["fieldPath"] == RUN_ID_FIELD_PATH
        run_id = tr["metadata"]["name"]
    assert RUN_ID_RE.match(run_id), f"RUN_ID {run_id!r} is not a valid run id"
    # The operator names a runner's Service <name>-service-<i>: a DNS label of at most 63.
    service = f"{tr['metadata']['name']}-service-{tr['spec']['parallelism']}"
    assert re.match(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", service) and len(service) <= 63


def test_results_dir_is_a_mounted_shared_persistent_volume():
    r = runner()
    results_dir = env()["RESULTS_DIR"]["value"]
    assert results_dir != SCRIPT_MOUNT and not results_dir.startswith(SCRIPT_MOUNT + "/")
    mounts = [m for m in r.get("volumeMounts", []) if m["mountPath"].rstrip("/") == results_dir.rstrip("/")]
    assert len(mounts) == 1, f"no volumeMount at RESULTS_DIR {results_dir}"
    assert not mounts[0].get("readOnly", False)
    volumes = {v["name"]: v for v in r.get("volumes", [])}
    assert mounts[0]["name"] in volumes, "the volumeMount names no volume"
    claim = volumes[mounts[0]["name"]]["persistentVolumeClaim"]["claimName"]
    pvcs = {p["metadata"]["name"]: p for p in resources().get("PersistentVolumeClaim", [])}
    assert claim in pvcs, f"PVC {claim} is not among kustomization.yaml's resources"
    # Runners are separate pods on any node, writing at once.
    assert "ReadWriteMany" in pvcs[claim]["spec"]["accessModes"]


def test_kustomization_holds_the_testrun_and_its_results_volume():
    k = kustomization()
    assert k["apiVersion"] == "kustomize.config.k8s.io/v1beta1" and k["kind"] == "Kustomization"
    assert TESTRUN_FILE.name in k["resources"]
    assert all((DEPLOY / name).is_file() for name in k["resources"])
    assert [t["metadata"]["name"] for t in resources()["TestRun"]] == [load_testrun()["metadata"]["name"]]


def test_no_secret_is_written_into_the_manifest_or_argv():
    literal = {n for n, e in env().items() if "value" in e and re.search(r"TOKEN|PASSWORD|SECRET|KEY", n)}
    assert not literal, f"secrets must come from secretKeyRef/envFrom, not a literal: {literal}"
    args = load_testrun()["spec"].get("arguments", "")
    assert not re.search(r"(token|password)=", args, re.I)


def test_outputs_use_the_form_the_initializer_drops():
    # pkg/types/k6cli.go drops "-o/--out <value>" from the initializer's
    # `k6 archive`; "--out=<value>" would reach `k6 archive` and fail it.
    # The commented-out example counts too.
    lines = [line for line in TESTRUN_FILE.read_text().splitlines() if re.match(r"^\s*#?\s*arguments:", line)]
    assert lines, "testrun.yaml should show the InfluxDB output's arguments, if only in a comment"
    assert not [line for line in lines if re.search(r"(--out|-o)=", line)]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (for kubectl kustomize) is not installed")
def test_kustomize_renders_the_archive_unchanged_next_to_the_testrun(tmp_path):
    for f in DEPLOY.glob("*.yaml"):
        shutil.copy(f, tmp_path)
    # Not UTF-8, like an archive holding binary data: kustomize must put it under binaryData.
    archive = b"metadata.json\0\0\0\xff\xfe binary \x80\x81" * 64
    (tmp_path / "archive.tar").write_bytes(archive)
    out = subprocess.run(["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    docs = {d["kind"]: d for d in yaml.safe_load_all(out.stdout)}
    cm, tr, pvc = docs["ConfigMap"], docs["TestRun"], docs["PersistentVolumeClaim"]
    script = tr["spec"]["script"]["configMap"]
    assert script["name"] == cm["metadata"]["name"]
    assert base64.b64decode(cm["binaryData"][script["file"]]) == archive
    claim = {v["persistentVolumeClaim"]["claimName"] for v in tr["spec"]["runner"]["volumes"]}
    assert pvc["metadata"]["name"] in claim
    # The operator expects the ConfigMap (and the PVC) in the TestRun's namespace.
    assert cm["metadata"].get("namespace") == tr["metadata"].get("namespace") == pvc["metadata"].get("namespace")


def test_readme_makes_the_archive_and_merges_the_instances():
    text = README.read_text().replace("\\\n", " ")  # join shell continuation lines
    archive = [line for line in text.splitlines() if "k6 archive" in line and " -O " in line]
    assert archive, "README.md must show the k6 archive command"
    # Load-shaping parameters are frozen by k6 archive, so they go there with -e.
    assert any("-e SCALE=" in line for line in archive)
    assert "-e MAX_INSTANCES=" in text
    assert re.search(r"k6 x mqtt-merge \S+ --dir \S+", text)


# --- The README's procedure and the GitHub job that runs it ---------------

WORKFLOW = ROOT / ".github/workflows/test.yml"
JOB = "k6-operator"
CI = DEPLOY / "ci"
# A README block the job runs is marked `<!-- k6-operator job: <step> -->`,
# one it does not `<!-- not in the k6-operator job: <why> -->`; the job's step
# for it is named "README: <step>".
RUNS_MARK = re.compile(r"^<!-- k6-operator job: (.+?) -->$")
SKIP_MARK = re.compile(r"^<!-- not in the k6-operator job: (.+?) -->$")
STEP_PREFIX = "README: "
SHELL_FENCE = re.compile(r"^```(sh|bash|shell|console)\s*$")


def readme_blocks(text):
    """The README's shell blocks in order: (mark, name, lines), mark being
    "job", "skip" or None (unmarked)."""
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        if not SHELL_FENCE.match(line):
            continue
        end = lines.index("```", i + 1)
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mark = name = None
        if m := RUNS_MARK.match(prev):
            mark, name = "job", m.group(1)
        elif m := SKIP_MARK.match(prev):
            mark, name = "skip", m.group(1)
        blocks.append((mark, name, lines[i + 1 : end]))
    return blocks


def job_readme_steps(workflow):
    """The job's steps named "README: <step>", in order: (step, lines)."""
    steps = workflow["jobs"][JOB]["steps"]
    return [
        (s["name"][len(STEP_PREFIX) :], s["run"].rstrip("\n").splitlines())
        for s in steps
        if s.get("name", "").startswith(STEP_PREFIX)
    ]


def job_vs_readme(readme_text, workflow):
    """Every way the job and the README disagree about the procedure."""
    problems = []
    blocks = readme_blocks(readme_text)
    for mark, _, lines in blocks:
        if mark is None:
            problems.append(f"README block not marked as run by the job or not: {lines[:1]}")
    readme = {}
    for mark, name, lines in blocks:
        if mark == "job":
            if name in readme:
                problems.append(f"two README blocks named {name!r}")
            readme[name] = lines
    steps = job_readme_steps(workflow)
    for name, lines in steps:
        if name not in readme:
            problems.append(f"job step {STEP_PREFIX}{name!r} runs no README block")
        elif lines != readme[name]:
            pairs = itertools.zip_longest(readme[name], lines)
            first = next((a, b) for a, b in pairs if a != b)
            problems.append(f"job step {STEP_PREFIX}{name!r} differs from the README's block: {first}")
    first_seen = list(dict.fromkeys(name for name, _ in steps))
    if [n for n in first_seen if n in readme] != [n for n in readme if n in first_seen]:
        problems.append(f"the job runs the README's blocks in another order: {first_seen} vs {list(readme)}")
    for name in readme:
        if name not in first_seen:
            problems.append(f"README block {name!r} is marked as run by the job, which does not run it")
    return problems


def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def test_the_github_job_runs_the_readme_procedure_as_written():
    assert job_vs_readme(README.read_text(), workflow()) == []
    # The procedure itself: operator, archive, apply, wait, collect, merge.
    names = [name for name, _ in job_readme_steps(workflow())]
    assert {"Install k6-operator", "Archive", "Run", "Copy the results out", "Merge and report"} <= set(names)
    # The second TestRun of the same name: the run block again, after the merge.
    assert names.count("Run") == 2 and names.index("Merge and report") < len(names) - 1 - names[::-1].index("Run")


@pytest.mark.parametrize(
    "change",
    ["a README line", "a job line", "an unmarked README block", "a README block the job skips", "the order"],
)
def test_a_change_to_the_readme_or_the_job_alone_is_caught(change):
    text, wf = README.read_text(), workflow()
    steps = wf["jobs"][JOB]["steps"]
    run_steps = [s for s in steps if s.get("name") == STEP_PREFIX + "Run"]
    if change == "a README line":
        text = text.replace("--timeout=15m", "--timeout=20m", 1)
    elif change == "a job line":
        run_steps[0]["run"] = run_steps[0]["run"].replace("--server-side ", "")
    elif change == "an unmarked README block":
        text += "\n```sh\nkubectl get testrun -A\n```\n"
    elif change == "a README block the job skips":
        wf["jobs"][JOB]["steps"] = [s for s in steps if s.get("name") != STEP_PREFIX + "Archive"]
    else:
        i = steps.index(next(s for s in steps if s.get("name") == STEP_PREFIX + "Archive"))
        steps[i], steps[i + 1] = steps[i + 1], steps[i]
    assert job_vs_readme(text, wf), f"{change} went unnoticed"


def test_the_job_cannot_pass_on_a_failed_command():
    job = workflow()["jobs"][JOB]
    shell = job["defaults"]["run"]["shell"]
    assert re.search(r"\bbash\b.*-euo pipefail", shell), shell
    assert not [s["name"] for s in job["steps"] if "shell" in s], "a step with a shell of its own"
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    # The outcome is checked against numbers fixed before the run and the
    # broker's own, and the second TestRun against the first run's files.
    assert "ci/check_run.py" in runs and "--publishes 6000" in runs and "$SYS/broker/publish/messages" in runs
    assert "sha256sum -c" in runs and "exists already" in runs


def test_the_job_pins_kind_kubectl_and_the_operator_as_the_readme_says():
    job = workflow()["jobs"][JOB]
    kind_version, kubectl_version = job["env"]["KIND_VERSION"], job["env"]["KUBECTL_VERSION"]
    text = README.read_text()
    assert re.fullmatch(r"v\d+\.\d+\.\d+", kind_version) and f"kind {kind_version}" in text
    # kubectl at the node's Kubernetes version, the node image pinned by digest.
    node = yaml.safe_load((CI / "kind.yaml").read_text())["nodes"][0]
    assert re.fullmatch(rf"kindest/node:{re.escape(kubectl_version)}@sha256:[0-9a-f]{{64}}", node["image"])
    assert f"Kubernetes {kubectl_version.lstrip('v')}" in text
    # The operator's bundle at its release tag, the version the manifests are checked against.
    assert "https://raw.githubusercontent.com/grafana/k6-operator/v1.6.0/bundle.yaml" in text


def test_the_jobs_mosquitto_is_the_projects():
    """The broker in the cluster: .env's image and the compose service's
    configuration file, mounted where the image reads it."""
    dotenv = dict(
        line.split("=", 1) for line in (ROOT / ".env").read_text().splitlines() if re.match(r"^[A-Z_]+=", line)
    )
    docs = {d["kind"]: d for d in yaml.safe_load_all((CI / "mosquitto.yaml").read_text())}
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["image"] == dotenv["MOSQUITTO_IMAGE"]
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["mosquitto"]
    conf_path = next(v.split(":")[1] for v in compose["volumes"] if v.startswith("./brokers/mosquitto/mosquitto.conf:"))
    mount = container["volumeMounts"][0]
    assert conf_path == f"{mount['mountPath']}/mosquitto.conf"
    configmap = next(v["configMap"]["name"] for v in pod["volumes"] if v["name"] == mount["name"])
    runs = "\n".join(s.get("run", "") for s in workflow()["jobs"][JOB]["steps"])
    assert f"create configmap {configmap} \\\n  --from-file=mosquitto.conf=brokers/mosquitto/mosquitto.conf" in runs
    # At the host and port of testrun.yaml's MQTT_URL.
    url = env()["MQTT_URL"]["value"]
    service = docs["Service"]
    assert (
        url
        == f"mqtt://{service['metadata']['name']}.mqtt-bench.svc.cluster.local:{service['spec']['ports'][0]['port']}"
    )


def test_the_jobs_storage_is_a_default_read_write_many_class():
    docs = {d["kind"]: d for d in yaml.safe_load_all((CI / "storage.yaml").read_text())}
    sc, pv = docs["StorageClass"], docs["PersistentVolume"]
    assert sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"] == "true"
    assert pv["spec"]["storageClassName"] == sc["metadata"]["name"]
    pvc = resources()["PersistentVolumeClaim"][0]
    # results-pvc.yaml names no class: the cluster's default must serve it.
    assert "storageClassName" not in pvc["spec"]
    assert set(pvc["spec"]["accessModes"]) <= set(pv["spec"]["accessModes"])
    assert pv["spec"]["capacity"]["storage"] == pvc["spec"]["resources"]["requests"]["storage"]
    runs = "\n".join(s.get("run", "") for s in workflow()["jobs"][JOB]["steps"])
    assert f"install -d -m 1777 {pv['spec']['hostPath']['path']}" in runs


# --- CPU: all runners at once on a small cluster ----------------------------

# What a kind v0.33.0 node requests before the TestRun, in millicores:
# kubeadm's static pods (kube-apiserver 250m, kube-controller-manager 200m,
# kube-scheduler 100m, etcd 100m), CoreDNS 2 x 100m
# (cmd/kubeadm/app/phases/addons/dns/manifests.go), kindnet 100m (kind
# pkg/build/nodeimage/const_cni.go), and k6-operator v1.6.0's controller 100m
# (bundle.yaml). The starter's 50m: pkg/resources/jobs/starter.go.
KIND_NODE_REQUESTS_M = 250 + 200 + 100 + 100 + 2 * 100 + 100
OPERATOR_REQUEST_M = 100
STARTER_REQUEST_M = 50


def millicores(q):
    q = str(q)
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def test_the_default_runners_all_fit_a_node_of_two_allocatable_cpus():
    """The operator starts no runner until all run, so they must all be
    placed at once, with the starter, beside what the node already runs."""
    spec = load_testrun()["spec"]
    runners = spec["parallelism"] * millicores(runner()["resources"]["requests"]["cpu"])
    kind = yaml.safe_load((CI / "kind.yaml").read_text())
    patch = yaml.safe_load(kind["nodes"][0]["kubeadmConfigPatches"][0])
    # GitHub's ubuntu-24.04 runners have 4 CPUs; the job checks the node reports 2.
    allocatable = 4000 - millicores(patch["systemReserved"]["cpu"])
    assert allocatable == 2000
    docs = {d["kind"]: d for d in yaml.safe_load_all((CI / "mosquitto.yaml").read_text())}
    mosquitto_m = millicores(
        docs["Deployment"]["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
    )
    used = KIND_NODE_REQUESTS_M + OPERATOR_REQUEST_M + mosquitto_m
    assert used + runners + STARTER_REQUEST_M <= allocatable, (
        f"{spec['parallelism']} runners request {runners}m; with the starter's {STARTER_REQUEST_M}m and the "
        f"{used}m already requested, more than the node's {allocatable}m: runners would stay Pending"
    )


def test_readme_states_the_cpu_rule_and_the_default_budget():
    text = README.read_text()
    spec = load_testrun()["spec"]
    per_runner = runner()["resources"]["requests"]["cpu"]
    assert "`parallelism` x `requests.cpu` free, plus 50m for the starter" in " ".join(text.split())
    n = spec["parallelism"]
    assert f"{n} x {per_runner} = {n * millicores(per_runner)}m" in text
    assert f"{n * millicores(per_runner) + STARTER_REQUEST_M}m" in text
    assert f"{KIND_NODE_REQUESTS_M + OPERATOR_REQUEST_M + 100}m of 2000m allocatable" in text
    # The troubleshooting item names the scheduler's reason and the rule.
    assert "`Insufficient cpu`" in text and "runner pods ready" in text


# --- The archive: its size limit, and how it reaches the runners -----------

CHECK_ARCHIVE = DEPLOY / "check-archive.sh"
CONFIGMAP_LIMIT = 1024 * 1024  # ValidateConfigMap: core.MaxSecretSize


@pytest.mark.parametrize("size, ok", [(CONFIGMAP_LIMIT, True), (CONFIGMAP_LIMIT + 1, False)])
def test_check_archive_refuses_an_archive_a_configmap_cannot_hold(tmp_path, size, ok):
    archive = tmp_path / "archive.tar"
    archive.write_bytes(b"x" * size)
    p = subprocess.run([CHECK_ARCHIVE, archive], capture_output=True, text=True, timeout=30)
    assert (p.returncode == 0) == ok, p.stderr
    if not ok:
        # The file, its size, the limit and the fix.
        for part in (str(archive), f"{size} bytes", f"{CONFIGMAP_LIMIT} bytes", "smaller archive", "volumeClaim"):
            assert part in p.stderr, (part, p.stderr)


def test_check_archive_names_a_missing_archive_and_how_to_make_it(tmp_path):
    p = subprocess.run([CHECK_ARCHIVE, tmp_path / "none.tar"], capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "none.tar does not exist" in p.stderr and "k6 archive" in p.stderr


def test_readme_checks_the_archive_and_applies_server_side():
    """Client-side apply copies the ConfigMap into an annotation capped at
    262,144 bytes (about 150 KB of archive); server-side apply does not."""
    blocks = [(name, lines) for mark, name, lines in readme_blocks(README.read_text()) if mark]
    lines = [line for _, block in blocks for line in block]
    applies = [i for i, line in enumerate(lines) if re.search(r"kubectl apply .*-k deploy/k6-operator", line)]
    assert applies and all("--server-side" in lines[i] for i in applies), [lines[i] for i in applies]
    check = next(i for i, line in enumerate(lines) if line.startswith("deploy/k6-operator/check-archive.sh"))
    assert check < applies[0]


def test_readme_shows_the_operators_arguments_before_the_archive():
    # runner.go: k6 run, --quiet, the segment arguments, spec.arguments, the
    # script, --address, --paused, the tags.
    tr = load_testrun()
    tr["spec"]["arguments"] = "--out influxdb=http://x:8086/k6"
    cmd = runner_command(tr, 1, "/test/archive.tar", "0.0.0.0:6565")
    assert cmd.index("--out") < cmd.index("/test/archive.tar") < cmd.index("--address=0.0.0.0:6565")
    shown = re.search(r"`(k6 run --quiet [^`]+)`", README.read_text()).group(1).split()
    assert shown.index("<arguments>") + 1 == shown.index("/test/archive.tar")
    assert shown[shown.index("/test/archive.tar") + 1 :] == cmd[cmd.index("/test/archive.tar") + 1 :][:2] + [
        "--tag",
        "instance_id=<i>",
        "--tag",
        "testrun_name=<name>",
    ]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl (for kubectl kustomize) is not installed")
def test_a_k6_archive_lands_under_data_with_its_bytes_intact(k6_bin, tmp_path):
    """A real k6 archive (tar headers, NUL padding, JavaScript) is valid
    UTF-8, so kustomize puts it under data, not binaryData."""
    for f in DEPLOY.glob("*.yaml"):
        shutil.copy(f, tmp_path)
    archive = tmp_path / "archive.tar"
    subprocess.run(
        [k6_bin, "archive", "--quiet", "-O", archive, ROOT / "k6/scenarios/p2p.js"],
        check=True,
        capture_output=True,
        timeout=120,
        env=dict(os.environ, K6_NO_USAGE_REPORT="true"),
    )
    content = archive.read_bytes()
    assert b"\0" in content and content.decode("utf-8")
    out = subprocess.run(["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    cm = next(d for d in yaml.safe_load_all(out.stdout) if d["kind"] == "ConfigMap")
    assert "binaryData" not in cm
    assert cm["data"]["archive.tar"].encode("utf-8") == content
    text = KUSTOMIZATION_FILE.read_text()
    assert "valid UTF-8 under data" in text


# --- The replay: the runners' command lines as local processes --------------

REPLAY_MQTT_PORT = loopback_port(11950)
REPLAY_API_PORTS = [loopback_port(11951 + i) for i in range(4)]
# curl_start.go: the starter's PATCH body (types.StatusAPIRequest).
UNPAUSE = {"data": {"attributes": {"paused": False}, "id": "default", "type": "status"}}


def runner_command(testrun, index, script, address):
    """The command k6-operator v1.6.0 gives runner `index` (1-based)
    (runner.go NewRunnerJob, segmentation.go NewCommandFragments), with the
    ConfigMap's /test/<file> and the pod's 0.0.0.0:6565 as given."""
    spec, name = testrun["spec"], testrun["metadata"]["name"]
    n = spec["parallelism"]
    cmd = ["k6", "run"]
    if spec.get("quiet", "true") == "true":
        cmd.append("--quiet")
    if n > 1:

        def part(k):
            return "0" if k == 0 else "1" if k == n else f"{k}/{n}"

        sequence = ",".join(["0"] + [f"{k}/{n}" for k in range(1, n)] + ["1"])
        cmd += [f"--execution-segment={part(index - 1)}:{part(index)}", f"--execution-segment-sequence={sequence}"]
    cmd += spec.get("args") or spec.get("arguments", "").split()
    cmd += [script, f"--address={address}"]
    if spec.get("paused", "true") == "true":
        cmd.append("--paused")
    return cmd + ["--tag", f"instance_id={index}", "--tag", f"testrun_name={name}"]


def readme_archive(k6_bin, out, *extra):
    """The README's `k6 archive` line as written, with our build, another
    output path, and extra -e options."""
    block = next(lines for mark, name, lines in readme_blocks(README.read_text()) if name == "Archive")
    args = shlex.split("\n".join(block).replace("\\\n", " ").splitlines()[0])
    assert args[:2] == ["bin/k6", "archive"], args
    args[args.index("-O") + 1] = str(out)
    return [k6_bin, "archive", *extra, *args[2:]]


def replay_runners(k6_bin, testrun, archive, url, results, logs):
    """One k6 process per runner, with its pod's env (MQTT_URL, RESULTS_DIR
    and the label-derived RUN_ID as they would resolve), started paused and
    unpaused as the starter does once every REST API answers (k6_start.go)."""
    name = testrun["metadata"]["name"]
    env = dict(os.environ, K6_NO_USAGE_REPORT="true")
    for e in testrun["spec"]["runner"]["env"]:
        env[e["name"]] = e.get("value", name)  # valueFrom: the k6_cr label, the TestRun's name
    env.update(MQTT_URL=url, RESULTS_DIR=str(results))
    procs = []
    for i, port in enumerate(REPLAY_API_PORTS, start=1):
        cmd = runner_command(testrun, i, str(archive), f"127.0.0.1:{port}")
        log = open(logs / f"runner-{i}.log", "w")
        procs.append(subprocess.Popen([k6_bin, *cmd[1:]], env=env, stdout=log, stderr=subprocess.STDOUT))

    def api_ready():
        try:
            return all(requests.get(f"http://127.0.0.1:{p}/v1/status", timeout=2).ok for p in REPLAY_API_PORTS)
        except requests.ConnectionError:
            return False

    assert wait_until(api_ready, timeout=60), "the runners' REST APIs did not answer"
    for port in REPLAY_API_PORTS:
        requests.patch(f"http://127.0.0.1:{port}/v1/status", json=UNPAUSE, timeout=10).raise_for_status()
    return [p.wait(180) for p in procs]


def digests(results, run_id):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(results.glob(f"{run_id}*"))}


def test_the_operators_runners_replayed_merge_and_a_reused_name_stops_in_setup(k6_bin, tmp_path):
    tr = load_testrun()
    run_id, n = tr["metadata"]["name"], tr["spec"]["parallelism"]
    results, logs = tmp_path / "results", tmp_path / "logs"
    results.mkdir()
    logs.mkdir()
    archive = tmp_path / "archive.tar"
    # The README's archive, shortened to 5 s: p2p.js at SCALE=0.1 sends 100 msg/s.
    subprocess.run(readme_archive(k6_bin, archive, "-e", "DURATION=5s"), cwd=ROOT, check=True, timeout=120)
    assert subprocess.run([CHECK_ARCHIVE, archive], timeout=30).returncode == 0
    text = f"listener {REPLAY_MQTT_PORT} 127.0.0.1\nallow_anonymous true\nsys_interval 1\nmax_connections -1\n"
    with mosquitto(tmp_path / "m.conf", REPLAY_MQTT_PORT, text) as url:
        codes = replay_runners(k6_bin, tr, archive, url, results, logs)
        log_text = {i: (logs / f"runner-{i}.log").read_text() for i in range(1, n + 1)}
        assert codes == [0] * n, log_text
        assert sorted(p.name for p in results.glob("*.json")) == [
            f"{run_id}.seg-{i}-of-{n}.json" for i in range(1, n + 1)
        ]
        m = subprocess.run(
            [k6_bin, "x", "mqtt-merge", run_id, "--dir", results], capture_output=True, text=True, timeout=120
        )
        assert m.returncode == 0 and "PASSED" in m.stdout, m.stdout + m.stderr
        broker = sys_counters(REPLAY_MQTT_PORT)
        # The GitHub job's own check of the merged result, on this run.
        check = subprocess.run(
            [sys.executable, CI / "check_run.py", results / f"{run_id}.json", "--instances", str(n)]
            + ["--publishes", "500", "--connections", "20"]
            + ["--broker-received", str(broker["received"]), "--broker-sent", str(broker["sent"])],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert check.returncode == 0, check.stdout + check.stderr

        # The same TestRun name again: every runner stops in setup(), before
        # any connection, and the first run's files stay as they were.
        before = digests(results, run_id)
        codes = replay_runners(k6_bin, tr, archive, url, results, logs)
        assert all(c != 0 for c in codes), codes
        for i in range(1, n + 1):
            assert f"{run_id}.seg-{i}-of-{n}.json exists already" in (logs / f"runner-{i}.log").read_text()
        assert digests(results, run_id) == before
        # No message went through the broker (sys_counters waits for its next $SYS).
        assert sys_counters(REPLAY_MQTT_PORT)["received"] == broker["received"]


def test_the_jobs_check_fails_a_run_short_of_its_numbers(tmp_path):
    merged = {
        "passed": True,
        "merge": {"incomplete": False, "missing_instances": [], "instances_expected": 4, "instances": [{}] * 4},
        "delivery": {},
        "counts": dict.fromkeys(["mqtt_lost", "mqtt_duplicates", "mqtt_connect_failures"], 0)
        | {"mqtt_publishes": 5999, "mqtt_receives": 5999, "mqtt_connects": 20},
    }
    f = tmp_path / "r.json"
    f.write_text(json.dumps(merged))
    args = ["--instances", "4", "--publishes", "6000", "--connections", "20"]
    p = subprocess.run(
        [sys.executable, CI / "check_run.py", f, *args, "--broker-received", "5999", "--broker-sent", "5999"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "mqtt_publishes: 5999, expected 6000" in p.stderr, p.stderr
