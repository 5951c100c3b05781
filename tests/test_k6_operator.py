"""No Kubernetes here, so deploy/k6-operator is held against what k6-operator
documents: the TestRun fields of its CRD, how it starts the runners, and the
wiring our scenarios need (archive, image, env, results volume).

Source: grafana/k6-operator v1.6.0, commit cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/config/crd/bases/k6.io_testruns.yaml
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/api/v1alpha1/testrun_types.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/resources/jobs/runner.go
  https://github.com/grafana/k6-operator/blob/cf0ae21f4e26b0dd0f99d763ae72e063b4384f2a/pkg/types/k6cli.go
and https://grafana.com/docs/k6/latest/testing-guides/running-distributed-tests/
(k6-docs docs/sources/k6/next/testing-guides/running-distributed-tests.md)."""

import base64
import re
import shutil
import subprocess

import pytest
import yaml

from conftest import ROOT

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
    assert "kubectl apply -k deploy/k6-operator" in text
    assert "not run on a cluster" in text.lower()
