"""``distrain serve --api-key KEY`` (or ``DISTRAIN_API_KEY``) as a real process: without the key, or with a wrong
one, every route but ``/health`` and the demo page's files answers 401 and the model computes nothing (the probe
model writes down every text it computes, and the server's own counters agree); the ``openai`` client with the
key gets completions; the demo page asks for the key; a key that cannot travel in a header exits 2."""

from __future__ import annotations

import json

import httpx
import pytest

from support.cli import run_cli
from support.serving import ServerProcess

KEY = "sk-test-3b1f0c9e"
AUTHORIZED = {"Authorization": f"Bearer {KEY}"}
REFUSED_HEADERS = [{}, {"Authorization": "Bearer wrong-key"}, {"Authorization": f"Bearer {KEY}x"},
                   {"Authorization": f"Basic {KEY}"}, {"Authorization": KEY}, {"Authorization": "Bearer"}]


def probe_flags(record_file) -> list[str]:
    return ["--include-package", "serving_probes", "-o", json.dumps({"model.record_file": str(record_file)})]


def test_without_the_key_or_with_a_wrong_one_every_route_but_health_gets_401_and_nothing_is_computed(
        probe_archive, tmp_path):
    computed = tmp_path / "computed.txt"
    flags = ["--api-key", KEY, *probe_flags(computed)]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags, headers=AUTHORIZED) as server:
        warmed_up = computed.read_text()  # the warm-up record, computed before /ready
        batches_before = server.metric("distrain_inference_seconds_count")
        refused = 0
        for headers in REFUSED_HEADERS:
            for method, path, body in (("POST", "/predict", {"text": "good film"}),
                                       ("POST", "/predict_batch", [{"text": "bad film"}]),
                                       ("GET", "/info", None), ("GET", "/ready", None), ("GET", "/metrics", None),
                                       ("POST", "/v1/completions", {"prompt": "x"}), ("GET", "/nowhere", None)):
                response = httpx.request(method, server.url + path, json=body, headers=headers, timeout=10)
                assert response.status_code == 401, (path, headers, response.text)
                assert response.json()["error"]["type"] == "unauthorized"
                assert response.headers["www-authenticate"].startswith("Bearer")
                refused += 1
        assert computed.read_text() == warmed_up  # the model saw none of them
        assert server.metric("distrain_unauthorized_requests_total") == refused
        assert server.metric("distrain_inference_seconds_count") == batches_before
        assert server.metric('distrain_requests_total{endpoint="predict"}') == 0

        health = httpx.get(server.url + "/health", timeout=10)
        assert health.status_code == 200 and health.json()["status"] == "alive"
        assert httpx.get(server.url + "/", timeout=10).status_code == 200  # the demo page, which asks for the key
        info = httpx.get(server.url + "/info", headers=AUTHORIZED, timeout=10).json()
        assert info["options"]["api_key_required"] is True and KEY not in json.dumps(info)

        answer = httpx.post(server.url + "/predict", json={"text": "good film"}, timeout=10,
                            headers={"Authorization": f"bearer {KEY}"})  # the scheme is case-insensitive
        assert answer.status_code == 200 and "label" in answer.json()
        assert computed.read_text() == warmed_up + "good film\n"
        assert server.metric('distrain_requests_total{endpoint="predict",status="200"}') == 1
        assert server.metric('distrain_requests_total{endpoint="predict"}') == 1  # the reading above could differ
        assert server.stop() == 0
    assert KEY not in server.output()


def test_the_openai_client_with_the_key_gets_completions_and_without_it_an_authentication_error(
        cycle_lm_archive, tmp_path):
    import openai

    with ServerProcess(cycle_lm_archive, tmp_path / "server", env={"DISTRAIN_API_KEY": KEY},
                       headers=AUTHORIZED) as server:
        url = server.url + "/v1"
        tokens_before = server.metric("distrain_generated_tokens_total")
        for key in ("wrong", KEY + KEY):
            client = openai.OpenAI(base_url=url, api_key=key, max_retries=0, timeout=60)
            with pytest.raises(openai.AuthenticationError):
                client.completions.create(model="model.tar.gz", prompt="the cat", max_tokens=4, temperature=0)
            with pytest.raises(openai.AuthenticationError):
                client.models.list()
        assert server.metric("distrain_generated_tokens_total") == tokens_before
        assert server.metric("distrain_unauthorized_requests_total") == 4

        client = openai.OpenAI(base_url=url, api_key=KEY, max_retries=0, timeout=60)
        assert [model.id for model in client.models.list()] == ["model.tar.gz"]
        completion = client.completions.create(model="model.tar.gz", prompt="the cat", max_tokens=4, temperature=0)
        assert completion.choices[0].text and completion.usage.completion_tokens == 4
        streamed = client.completions.create(model="model.tar.gz", prompt="the cat", max_tokens=4, temperature=0,
                                             stream=True)
        assert "".join(chunk.choices[0].text for chunk in streamed) == completion.choices[0].text
        assert server.metric("distrain_generated_tokens_total") == tokens_before + 8
        assert server.stop() == 0


def test_the_demo_page_asks_for_the_key_and_predicts_with_it(probe_archive, tmp_path):
    from playwright.sync_api import sync_playwright

    from test_serve_demo_page import CHROMIUM

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/setup.sh --tests as root (apt-get install chromium)"
    flags = ["--api-key", KEY, *probe_flags(tmp_path / "computed.txt")]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags, headers=AUTHORIZED) as server, \
            sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("#key-form:not([hidden])", timeout=30_000)
            assert "401" in page.inner_text("#error")
            page.fill("#api-key", "wrong")
            page.click("#key-submit")
            page.wait_for_selector("#key-form:not([hidden])", timeout=30_000)
            assert "refused" in page.inner_text("#model")
            page.fill("#api-key", KEY)
            page.click("#key-submit")
            page.wait_for_selector("body[data-ready=true]", timeout=30_000)
            page.fill("#field-text", "good great film")
            page.click("#submit")
            page.wait_for_selector("#result:not([hidden])", timeout=30_000)
            assert page.inner_text("#label") in ("pos", "neg")
            assert page.locator("#error").is_hidden()
        finally:
            browser.close()
        assert server.stop() == 0


ASCII_ONLY = "must be printable ASCII without spaces (it travels in an HTTP header)"


@pytest.mark.parametrize("key, why", [("", "must not be empty"), ("two words", ASCII_ONLY), ("ключ", ASCII_ONLY)])
def test_a_key_that_cannot_travel_in_a_header_exits_2_with_one_line(probe_archive, key, why):
    for arguments, env, name in ((["--api-key", key], {}, "--api-key"), ([], {"DISTRAIN_API_KEY": key}, "DISTRAIN_API_KEY")):
        result = run_cli("serve", str(probe_archive.archive), "--port", "0", *arguments, env=env, timeout=60)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [f"error: {name} {why}"]


def test_a_server_open_beyond_loopback_without_a_key_says_so(capsys):
    from distrain.commands.serve import warn_if_open

    warn_if_open("127.0.0.1", None)
    warn_if_open("0.0.0.0", KEY)
    assert capsys.readouterr().err == ""
    warn_if_open("0.0.0.0", None)
    assert "without --api-key: anyone who can reach this port" in capsys.readouterr().err
