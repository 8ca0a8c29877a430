"""deploy/: the compose file and the Kubernetes manifests of docs/scale.md are consistent and use only what exists
(``norma serve`` options, the service's health routes, the store's environment variable, the Ray version)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import yaml

from norma import __version__
from norma.cli import cli
from norma.store import DB_URL_ENV
from tests.conftest import REPO

DEPLOY = REPO / "deploy"


def _load(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def _serve_options() -> set[str]:
    serve = cli.lazy["serve"].load()  # the CLI imports each command when it runs
    return {name for param in serve.params if isinstance(param, click.Option) for name in param.opts}


def _check_serve_command(command: list[str]) -> None:
    assert command[:2] == ["norma", "serve"]
    flags = [arg for arg in command[2:] if arg.startswith("--")]
    assert flags, command
    assert set(flags) <= _serve_options(), set(flags) - _serve_options()
    assert command[command.index("--host") + 1] == "0.0.0.0"  # reachable from the proxy / the Service


def _ray_version() -> str:
    import ray

    return str(ray.__version__)


def test_compose_runs_replicas_over_one_postgres() -> None:
    (compose,) = _load(DEPLOY / "compose.yaml")
    services = compose["services"]
    assert set(services) == {"db", "norma", "proxy"}
    norma = services["norma"]
    assert norma["deploy"]["replicas"] >= 2
    _check_serve_command(norma["command"])
    port = norma["command"][norma["command"].index("--port") + 1]
    url = norma["environment"][DB_URL_ENV]
    assert re.fullmatch(r"postgresql://(\w+):(\w+)@db:5432/(\w+)", url)
    db = services["db"]["environment"]
    assert url == f"postgresql://{db['POSTGRES_USER']}:{db['POSTGRES_PASSWORD']}@db:5432/{db['POSTGRES_DB']}"
    assert "pgvector" in services["db"]["image"]
    assert "NORMA_ADMIN_KEY" in norma["environment"]
    assert "/v1/ready" in " ".join(norma["healthcheck"]["test"])
    assert norma["depends_on"]["db"]["condition"] == "service_healthy"
    assert (DEPLOY.parent / norma["build"]["dockerfile"]).is_file()
    for service in services.values():
        image = service.get("image", "")
        assert ":" in image, image
        assert not image.endswith(":latest"), image
    nginx = (DEPLOY / "nginx.conf").read_text(encoding="utf-8")
    assert f"server norma:{port};" in nginx
    mount = services["proxy"]["volumes"][0].split(":")
    assert (DEPLOY / mount[0]).resolve() == (DEPLOY / "nginx.conf").resolve()
    assert f"listen {services['proxy']['ports'][0].split(':')[-1]};" in nginx


def test_kubernetes_deployment_and_service_fit_together() -> None:
    deployment, service = _load(DEPLOY / "k8s" / "norma-service.yaml")
    assert (deployment["apiVersion"], deployment["kind"]) == ("apps/v1", "Deployment")
    assert (service["apiVersion"], service["kind"]) == ("v1", "Service")
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["replicas"] >= 2
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    (container,) = spec["template"]["spec"]["containers"]
    _check_serve_command(container["command"])
    port = int(container["command"][container["command"].index("--port") + 1])
    (named,) = container["ports"]
    assert named["containerPort"] == port
    assert service["spec"]["ports"][0]["targetPort"] == named["name"]
    assert container["readinessProbe"]["httpGet"] == {"path": "/v1/ready", "port": named["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/v1/health", "port": named["name"]}
    env = {item["name"]: item["valueFrom"]["secretKeyRef"] for item in container["env"]}
    assert set(env) == {DB_URL_ENV, "NORMA_ADMIN_KEY"}
    assert container["image"].endswith(f":{__version__}")


def test_kuberay_cluster_matches_the_ray_norma_uses() -> None:
    (cluster,) = _load(DEPLOY / "k8s" / "raycluster.yaml")
    assert (cluster["apiVersion"], cluster["kind"]) == ("ray.io/v1", "RayCluster")
    spec = cluster["spec"]
    assert spec["rayVersion"] == _ray_version()
    head = spec["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert {port["containerPort"] for port in head["ports"]} >= {6379, 10001}
    (group,) = spec["workerGroupSpecs"]
    assert 1 <= group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]
    worker = group["template"]["spec"]["containers"][0]
    assert worker["image"] == head["image"]
    assert head["image"].endswith(f":{__version__}")
    dockerfile = (DEPLOY / "Dockerfile.ray").read_text(encoding="utf-8")
    assert f"FROM rayproject/ray:{_ray_version()}-py311" in dockerfile
    assert "norma[ray]" in dockerfile
