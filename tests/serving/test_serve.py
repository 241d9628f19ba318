"""``distrain serve`` as a real process: answers equal to ``distrain predict``, errors, isolation, back-pressure,
time limits, drain and memory. Servers start with ``--port 0 --port-file``, are polled until ``/ready``, and
stop with SIGTERM."""

from __future__ import annotations

import asyncio
import collections
import json
import random
import signal
import threading
import time

import httpx
import pytest

from support.cli import run_cli
from support.data import sentiment_records
from support.serving import MARKER, ServerProcess, post_concurrently, predict_file, wait_for


def read_records(path, count: int) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[:count]]


def assert_same_predictions(served: list[dict], expected: list[dict]) -> None:
    assert len(served) == len(expected)
    for number, (got, want) in enumerate(zip(served, expected)):
        assert got["label"] == want["label"], number
        assert got["probs"] == pytest.approx(want["probs"], abs=1e-5), number


def probe_flags(**model) -> list[str]:
    """``-o`` setting the probe model's arguments at serving time."""
    return ["--include-package", "serving_probes", "-o", json.dumps({f"model.{k}": v for k, v in model.items()})]


def in_background(function, *args):
    """Run ``function(*args)`` on a thread; ``.result()`` joins it and returns (or raises) its outcome."""
    outcome: dict = {}

    def target():
        try:
            outcome["value"] = function(*args)
        except BaseException as error:  # noqa: BLE001 - re-raised in result()
            outcome["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()

    class Handle:
        @staticmethod
        def done() -> bool:
            return not thread.is_alive()

        @staticmethod
        def result(timeout: float = 120):
            thread.join(timeout)
            assert not thread.is_alive(), "background requests did not finish"
            if "error" in outcome:
                raise outcome["error"]
            return outcome["value"]

    return Handle()


# ------------------------------------------------------------------------------ correctness
def test_200_reviews_from_32_concurrent_clients_equal_distrain_predict(drug_archive, tmp_path):
    records = read_records(drug_archive.validation, 200)
    expected = predict_file(drug_archive.archive, records, tmp_path / "predict")
    with ServerProcess(drug_archive.archive, tmp_path / "server") as server:
        answers = post_concurrently(server.url + "/predict", records, clients=32)
        assert [a.status for a in answers] == [200] * 200
        assert_same_predictions([a.body for a in answers], expected)
        # several requests shared a batch
        assert server.metric("distrain_batch_size_sum") > server.metric("distrain_batch_size_count")

        batch = httpx.post(server.url + "/predict_batch", json=records[:20], timeout=60)
        assert batch.status_code == 200 and batch.json()["errors"] == []
        assert_same_predictions(batch.json()["predictions"], expected[:20])

        metrics = httpx.get(server.url + "/metrics").text
        for family in ('distrain_requests_total{endpoint="predict",status="200"} 200.0',
                       "distrain_request_latency_seconds_bucket", "distrain_queue_wait_seconds_bucket",
                       "distrain_inference_seconds_bucket", "distrain_batch_size_bucket",
                       "distrain_batch_padding_ratio_bucket", "distrain_queue_depth 0.0"):
            assert family in metrics, family
        info = httpx.get(server.url + "/info").json()
        assert info["model"] == "basic_classifier" and info["input_fields"] == {"text": "text"}
        assert set(info["labels"]) == {"positive", "negative", "neutral"}
        assert server.stop() == 0


def test_bad_requests_get_json_errors_with_the_right_status(drug_archive, tmp_path):
    with ServerProcess(drug_archive.archive, tmp_path, "--max-request-bytes", "2000") as server:
        def post(path="/predict", **kwargs):
            return httpx.post(server.url + path, timeout=30, **kwargs)

        cases = [
            (post(content=b'{"text": "fine"}', headers={"Content-Type": "text/plain"}), 415, "unsupported_media_type"),
            (post(content=b'{"text": "fine"', headers={"Content-Type": "application/json"}), 400, "malformed_json"),
            (post(json={"text": "long " * 500}), 413, "body_too_large"),
            (post(json={"review": "fine"}), 422, "invalid_input"),
            (post(json={"text": 7}), 422, "invalid_input"),
            (post(json=["not", "an", "object"]), 422, "invalid_input"),
            (post(json={"text": "fine", "label": "no such label"}), 422, "invalid_input"),
            (post("/predict_batch", json={"text": "not a list"}), 422, "invalid_input"),
            (httpx.get(server.url + "/nowhere"), 404, "not_found"),
            # a classifier has no OpenAI routes (a causal-LM archive answers them: test_serve_generation.py)
            (post("/v1/completions", json={"prompt": "fine"}), 404, "not_found"),
            (httpx.get(server.url + "/v1/models"), 404, "not_found"),
            (httpx.get(server.url + "/predict"), 405, "method_not_allowed"),
        ]
        for response, status, kind in cases:
            assert response.status_code == status, response.text
            error = response.json()["error"]
            assert error["type"] == kind and error["message"], error
        assert post(json={"review": "fine"}).json()["error"]["field"] == "text"
        assert "text" in post(json={"text": 7}).json()["error"]["message"]

        answer = post("/predict_batch", json=[{"text": "works well"}, {"txt": "typo"}, {"text": ""}]).json()
        assert answer["predictions"][0]["label"] in {"positive", "negative", "neutral"}
        assert answer["predictions"][1:] == [None, None]
        assert [(e["index"], e["status"], e.get("field")) for e in answer["errors"]] == [(1, 422, "text"), (2, 422, "text")]
        assert server.stop() == 0


def test_bad_flags_and_missing_archive_exit_2_with_one_line(tmp_path):
    missing = run_cli("serve", str(tmp_path / "missing.tar.gz"))
    assert missing.returncode == 2 and "archive not found" in missing.stderr
    flag = run_cli("serve", str(tmp_path / "missing.tar.gz"), "--max-batch-size", "0")
    assert flag.returncode == 2 and "--max-batch-size must be at least 1" in flag.stderr


def test_a_model_that_fails_to_load_in_the_background_exits_2_with_its_error(probe_archive):
    """The archive loads on a thread while /health answers; its failure must reach the command, not
    leave the server loading forever."""
    result = run_cli("serve", str(probe_archive.archive), "--port", "0", *probe_flags(embedding_dim=16), timeout=120)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "weights do not fit the model" in result.stderr.strip().splitlines()[-1]


# -------------------------------------------------------------------------------- isolation
def test_a_bad_request_and_a_model_failure_do_not_fail_their_batch(probe_archive, tmp_path):
    good = sentiment_records(14, seed=5)
    expected = predict_file(probe_archive.archive, good, tmp_path / "predict", "--include-package", "serving_probes")
    bodies = good[:7] + [{"txt": "no text key"}] + [{"text": f"good {MARKER} movie"}] + good[7:]
    # a batch waits up to 2 s to fill to 15 (the malformed request never joins one), so all share one batch
    flags = ["--max-wait-ms", "2000", "--max-batch-size", "15", *probe_flags()]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        answers = post_concurrently(server.url + "/predict", bodies, clients=16)
        statuses = [a.status for a in answers]
        assert statuses[7] == 422 and answers[7].body["error"]["field"] == "text"
        assert statuses[8] == 500 and MARKER in answers[8].body["error"]["message"]
        served = [a for i, a in enumerate(answers) if i not in (7, 8)]
        assert [a.status for a in served] == [200] * 14
        assert_same_predictions([a.body for a in served], expected)
        assert server.metric("distrain_batches_split_total") >= 1  # the failing batch was re-run item by item
        assert server.stop() == 0


# ------------------------------------------------------------------------ back-pressure, time
def test_a_request_waiting_past_the_timeout_gets_504_and_is_never_computed(probe_archive, tmp_path):
    computed = tmp_path / "computed.txt"
    flags = ["--max-batch-size", "1", "--request-timeout-s", "0.5", *probe_flags(delay_s=1.0, record_file=str(computed))]
    texts = [f"good movie number{i}" for i in range(6)]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        answers = post_concurrently(server.url + "/predict", [{"text": t} for t in texts], clients=6)
        statuses = [a.status for a in answers]
        assert set(statuses) <= {200, 504} and statuses.count(504) >= 4, statuses
        assert all(a.body["error"]["type"] == "timeout" for a in answers if a.status == 504)
        # answered at the deadline, not after the model: every 504 reached its client before any 200 did
        assert max(a.seconds for a in answers if a.status == 504) < min(a.seconds for a in answers if a.status == 200)
        assert server.metric('distrain_requests_total{endpoint="predict",status="504"}') == statuses.count(504)
        assert server.stop() == 0
    seen = set(computed.read_text().splitlines())
    for text, status in zip(texts, statuses):
        assert (text in seen) == (status == 200), (text, status)


def polite_clients(url: str, clients: int, requests_each: int) -> list:
    """``clients`` concurrent clients, each sending ``requests_each`` requests (texts of its own) one after another
    and waiting as long as a 503's Retry-After says before its next one: (text, answer) pairs. Each opens its connection first
    and all start together, so latencies are the server's, not the client's connection set-up."""
    import asyncio

    from support.serving import Answer

    async def main():
        answers = []
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        start = asyncio.Event()
        connected = 0
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            async def one(k: int) -> None:
                nonlocal connected
                await client.get(url.rsplit("/", 1)[0] + "/health")
                connected += 1
                if connected == clients:
                    start.set()
                await start.wait()
                for i in range(requests_each):
                    started = time.perf_counter()
                    text = f"great film {k} {i}"
                    response = await client.post(url, json={"text": text})
                    answers.append((text, Answer(response.status_code, response.json(),
                                                 time.perf_counter() - started, dict(response.headers))))
                    if response.status_code == 503:
                        await asyncio.sleep(float(response.headers["retry-after"]))
            await asyncio.gather(*(one(k) for k in range(clients)))
        return answers

    return asyncio.run(main())


def test_a_full_queue_answers_503_at_once_and_the_server_recovers(probe_archive, tmp_path):
    # 0.3 s per batch of 4: the server drains ~13 requests/s, so the burst of 64 fills the queue of 8
    # however slowly one loaded client process sends it (at 0.05 s the queue sometimes never filled)
    computed = tmp_path / "computed.txt"
    flags = ["--max-queue", "8", "--max-batch-size", "4", *probe_flags(delay_s=0.3, record_file=str(computed))]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        sent = polite_clients(server.url + "/predict", clients=64, requests_each=3)
        answers = [answer for _, answer in sent]
        statuses = [a.status for a in answers]
        refused = [a for a in answers if a.status == 503]
        assert set(statuses) == {200, 503}, statuses
        assert all(a.body["error"]["type"] == "overloaded" and a.headers.get("retry-after") for a in refused)
        # "at once" is what the server does, not how fast a loaded machine does it: a refused request never
        # reaches the model (each client's texts are its own, and a 503 moves it on to its next text), and
        # every 503 is counted in the latency histogram
        count = 'distrain_request_latency_seconds_count{endpoint="predict",status="503"}'
        assert server.metric(count) == len(refused)
        assert httpx.get(server.url + "/ready").status_code == 200
        assert server.metric("distrain_queue_depth") == 0
        assert httpx.post(server.url + "/predict", json={"text": "good"}, timeout=30).status_code == 200
        assert server.stop() == 0
    seen = set(computed.read_text().splitlines())
    assert {text for text, answer in sent if answer.status == 200} <= seen
    assert not {text for text, answer in sent if answer.status == 503} & seen


# ------------------------------------------------------------------------------- lifecycle
def test_ready_is_503_while_the_model_loads(probe_archive, tmp_path):
    server = ServerProcess(probe_archive.archive, tmp_path, *probe_flags(init_delay_s=3.0)).start(ready=False)
    try:
        health = httpx.get(server.url + "/health", timeout=10)
        assert health.status_code == 200 and health.json()["phase"] == "loading"
        assert httpx.get(server.url + "/ready", timeout=10).status_code == 503
        early = httpx.post(server.url + "/predict", json={"text": "good"}, timeout=10)
        assert early.status_code == 503 and early.json()["error"]["type"] == "not_ready"
        wait_for(lambda: httpx.get(server.url + "/ready", timeout=10).status_code == 200, 60, "/ready")
        assert httpx.post(server.url + "/predict", json={"text": "good"}, timeout=10).status_code == 200
        assert server.stop() == 0
    finally:
        server.__exit__()


def test_sigterm_with_32_requests_in_flight_answers_all_and_exits_0(probe_archive, tmp_path):
    computed = tmp_path / "computed.txt"
    # the first request runs alone for 0.5 s while the other 31 arrive; then 4 batches of 8
    flags = ["--max-batch-size", "8", *probe_flags(delay_s=0.5, record_file=str(computed))]
    texts = [f"good film {i}" for i in range(32)]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        requests = in_background(post_concurrently, server.url + "/predict", [{"text": t} for t in texts], 32)
        wait_for(lambda: server.metric("distrain_requests_in_flight") == 32, 60, "32 requests in flight")
        server.signal(signal.SIGTERM)
        ready = httpx.get(server.url + "/ready", timeout=10)
        assert ready.status_code == 503 and not requests.done()  # at once: the drain has not ended
        late = httpx.post(server.url + "/predict", json={"text": "too late"}, timeout=10)
        assert late.status_code == 503 and late.json()["error"]["type"] == "draining"
        answers = requests.result()
        assert [a.status for a in answers] == [200] * 32
        assert server.process.wait(30) == 0
    assert set(texts) <= set(computed.read_text().splitlines())
    assert "too late" not in computed.read_text()


def send_until_refused(url: str, clients: int, keep_alive: bool) -> collections.Counter:
    """``clients`` closed-loop clients POST to ``url`` until the server refuses their connection; what each
    request got, by status code or exception class."""
    outcomes: collections.Counter = collections.Counter()

    async def main() -> None:
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients if keep_alive else 0)
        async with httpx.AsyncClient(timeout=60, limits=limits) as client:
            async def worker(number: int) -> None:
                while True:
                    try:
                        outcomes[(await client.post(url, json={"text": f"good {number}"})).status_code] += 1
                    except httpx.ConnectError:
                        outcomes["refused"] += 1
                        return
                    except httpx.TransportError as error:  # a reset shows as ReadError, WriteError, ...
                        outcomes[type(error).__name__] += 1
            await asyncio.gather(*(worker(number) for number in range(clients)))

    asyncio.run(main())
    return outcomes


def test_connections_during_the_drain_get_503_never_a_reset(probe_archive, tmp_path):
    """Clients that keep sending through the drain, on kept-alive and on new connections, get 200 or 503
    until the port closes, then a refused connection: never a reset (closing a listening socket resets the
    connections queued in it, and closing a kept-alive one resets the request crossing it)."""
    flags = ["--max-batch-size", "8", *probe_flags(delay_s=0.3)]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        kept_alive = in_background(send_until_refused, server.url + "/predict", 16, True)
        fresh = in_background(send_until_refused, server.url + "/predict", 16, False)
        wait_for(lambda: server.metric("distrain_requests_total") >= 40, 60, "40 requests answered")
        server.signal(signal.SIGTERM)
        assert server.process.wait(60) == 0
        for outcomes in (kept_alive.result(), fresh.result()):
            assert set(outcomes) <= {200, 503, "refused"}, outcomes
            assert outcomes[503] > 0 and outcomes["refused"] == 16, outcomes


def test_a_second_signal_exits_at_once(probe_archive, tmp_path):
    computed = tmp_path / "computed.txt"
    flags = ["--max-batch-size", "1", *probe_flags(delay_s=3.0, record_file=str(computed))]
    with ServerProcess(probe_archive.archive, tmp_path / "server", *flags) as server:
        def send():
            try:
                return post_concurrently(server.url + "/predict", [{"text": "good"}] * 4, 4)
            except httpx.TransportError as error:
                return error

        requests = in_background(send)
        wait_for(lambda: server.metric("distrain_requests_in_flight") == 4, 60, "4 requests in flight")
        server.signal(signal.SIGTERM)
        wait_for(lambda: "draining" in server.output(), 10, "the drain to start")
        server.signal(signal.SIGTERM)
        assert server.process.wait(30) == 1
        requests.result()
    # it did not wait for the queue: of the 4 requests (3 s each, one at a time) not all were computed
    assert len(computed.read_text().splitlines() if computed.exists() else []) < 4


# ---------------------------------------------------------------------------------- memory
def test_3000_requests_of_random_lengths_grow_memory_by_less_than_100_mb(drug_archive, tmp_path):
    """The suite's short form; ``scripts/soak_serve.py --minutes 10`` holds the server to 50 MB over a long mixed load."""
    words = " ".join(r["text"] for r in read_records(drug_archive.validation, 379)).split()
    rng = random.Random(0)

    def bodies(count):
        return [{"text": " ".join(rng.choices(words, k=rng.randint(1, 400)))} for _ in range(count)]

    with ServerProcess(drug_archive.archive, tmp_path) as server:
        warm = post_concurrently(server.url + "/predict", bodies(500), clients=16)
        assert {a.status for a in warm} == {200}
        before = server.rss_bytes()
        answers = post_concurrently(server.url + "/predict", bodies(3_000), clients=16)
        after = server.rss_bytes()
        assert {a.status for a in answers} == {200}
        assert after - before < 100 * 2**20, f"resident memory grew by {(after - before) / 2**20:.1f} MiB"
        assert server.stop() == 0
