"""``distrain serve`` on a causal-LM archive, as a real process: continuous batching behind OpenAI's routes.

The ``openai`` client (and ``/predict``) get ``distrain predict``'s greedy completions, streamed and not; 64 concurrent
requests of random lengths each get the tokens they get decoded alone; bad requests are refused by
field while other streams go on; a full queue answers 503 at once and a request that waited past its
timeout 504; streams dropped by their clients leave the batch; SIGTERM finishes the streams in flight.
Two servers are shared by the whole module: ``server`` (the archive as trained) and ``small_server``
(``--max-batch-size 4 --max-queue 4``, a tokenizer with a chat template and a context of 4096, so a
stream can run for many seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
import torch

from support.cli import run_cli
from support.serving import TOKENIZER, ServerProcess, post_concurrently, predict_file, wait_for
from support.transformer_fixtures import WORDS

PROMPTS = ["the cat", "a dog ran to the", "sat", "the big red", "on a mat"]
MODEL = "model.tar.gz"  # the id /v1/models lists: the archive's file name
CHAT_TEMPLATE = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def stop_and_check(server: ServerProcess) -> None:
    if server.process.poll() is None:
        assert server.stop() == 0, server.output()[-3000:]


@pytest.fixture(scope="module")
def server(cycle_lm_archive, tmp_path_factory):
    # the decoding rows attend through the compiled loop (the default for attention 256 or more wide; this
    # Llama's is 32): the 64 concurrent requests' tokens are checked against eager decoding one at a time
    with ServerProcess(cycle_lm_archive, tmp_path_factory.mktemp("lm_server"), "--max-request-bytes", "4096",
                       "--decode-attention", "compiled") as running:
        yield running
        stop_and_check(running)


@pytest.fixture(scope="module")
def small_server(cycle_lm_archive, tmp_path_factory):
    folder = tmp_path_factory.mktemp("lm_small_server")
    from distrain.pretrained import resolve_package_path

    tokenizer = folder / "tokenizer"
    shutil.copytree(resolve_package_path(TOKENIZER), tokenizer,
                    ignore=shutil.ignore_patterns("*.safetensors", "1_Pooling", "*.md"))
    settings = json.loads((tokenizer / "tokenizer_config.json").read_text())
    (tokenizer / "tokenizer_config.json").write_text(json.dumps({**settings, "chat_template": CHAT_TEMPLATE}))
    # rotary positions have no weights: the trained model runs with a longer context unchanged
    overrides = {"model.tokenizer_name": str(tokenizer), "model.config.max_position_embeddings": 4096}
    flags = ["--max-batch-size", "4", "--max-queue", "4", "--request-timeout-s", "2", "-o", json.dumps(overrides)]
    with ServerProcess(cycle_lm_archive, folder / "server", *flags) as running:
        yield running
        stop_and_check(running)


def openai_client(server: ServerProcess):
    import openai

    return openai.OpenAI(base_url=server.url + "/v1", api_key="not needed", max_retries=0, timeout=60)


def completion(server: ServerProcess, **body) -> httpx.Response:
    return httpx.post(server.url + "/v1/completions", json={"model": MODEL, **body}, timeout=60)


# ------------------------------------------------------------------------------ correctness
def test_the_openai_client_gets_distrain_predicts_greedy_completions_streamed_and_not(server, cycle_lm_archive,
                                                                                    tmp_path):
    expected = predict_file(cycle_lm_archive, [{"prompt": p} for p in PROMPTS], tmp_path)
    client = openai_client(server)
    assert [model.id for model in client.models.list()] == [MODEL]
    for prompt, want in zip(PROMPTS, expected):
        whole = client.completions.create(model=MODEL, prompt=prompt, temperature=0, max_tokens=12)
        assert whole.choices[0].text == want["completion"], prompt
        assert whole.choices[0].finish_reason == want["finish_reason"]
        assert whole.usage.completion_tokens == want["tokens"]
        chunks = list(client.completions.create(model=MODEL, prompt=prompt, temperature=0, max_tokens=12, stream=True))
        assert "".join(chunk.choices[0].text for chunk in chunks) == want["completion"], prompt
        assert [chunk.choices[0].finish_reason for chunk in chunks][-1] == want["finish_reason"]
        assert len(chunks) > 2  # token by token, not one piece
    # a bare request continues as the archive's generation settings say, as predict does
    assert completion(server, prompt=PROMPTS[0]).json()["choices"][0]["text"] == expected[0]["completion"]
    # /predict answers a prompt with the line predict writes for it (5 concurrent clients share decode steps)
    answers = post_concurrently(server.url + "/predict", [{"prompt": p} for p in PROMPTS], clients=5)
    assert [answer.status for answer in answers] == [200] * len(PROMPTS)
    assert [answer.body for answer in answers] == expected


def test_a_stop_string_ends_the_completion_before_it_streamed_and_not(server):
    full = completion(server, prompt="the cat", max_tokens=12).json()["choices"][0]["text"]
    words = full.split()
    assert len(words) > 3, full
    stop = " " + words[2]
    cut = full[:full.index(stop)]
    whole = completion(server, prompt="the cat", max_tokens=12, stop=[stop, "never said"]).json()["choices"][0]
    assert (whole["text"], whole["finish_reason"]) == (cut, "stop")
    chunks = list(openai_client(server).completions.create(model=MODEL, prompt="the cat", max_tokens=12, stop=stop,
                                                           stream=True))
    assert "".join(c.choices[0].text for c in chunks) == cut and chunks[-1].choices[0].finish_reason == "stop"
    assert server.metric('distrain_generations_cancelled_total{reason="stop_string"}') == 2


def test_64_concurrent_requests_of_random_lengths_each_get_their_one_at_a_time_tokens(server, cycle_lm_archive):
    from distrain.data.readers.prompt_completion_json import prompt_token_ids
    from distrain.experiment.archive.format import load_archive
    from distrain.generation.decoding import GenerationSettings, generate
    from distrain.pretrained import load_tokenizer

    tokenizer = load_tokenizer(TOKENIZER)
    rng = random.Random(0)
    bodies = []
    for _ in range(64):
        prompt = " ".join(rng.choices(WORDS, k=rng.randint(1, 40)))
        room = 64 - len(prompt_token_ids(tokenizer, prompt))  # more than fits is a 400 (the bad-input test)
        bodies.append({"prompt": prompt, "max_tokens": min(rng.randint(1, 30), room), "temperature": 0,
                       "return_token_ids": True, "model": MODEL})
    steps_before, rows_before = server.metric("distrain_batch_size_count"), server.metric("distrain_batch_size_sum")

    async def send_all() -> list[httpx.Response]:
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:
            return await asyncio.gather(*(client.post(server.url + "/v1/completions", json=b) for b in bodies))

    answers = asyncio.run(send_all())
    assert [answer.status_code for answer in answers] == [200] * 64
    steps = server.metric("distrain_batch_size_count") - steps_before
    rows = server.metric("distrain_batch_size_sum") - rows_before
    print(f"64 requests: {steps:.0f} decode steps, {rows / steps:.1f} rows per step on average")
    assert rows / steps > 4  # they shared steps: continuous batching, not one at a time

    model = load_archive(cycle_lm_archive).model
    ends, pad = model.end_and_pad_ids(tokenizer)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a tiny model's steps: one thread was 12x faster than two on the loaded 2-core machine
    try:
        alone_each = [generate(model.transformer, [prompt_token_ids(tokenizer, body["prompt"])],
                               GenerationSettings(max_new_tokens=body["max_tokens"]), ends, pad, model.context_length())[0]
                      for body in bodies]
    finally:
        torch.set_num_threads(threads)
    for body, answer, alone in zip(bodies, answers, alone_each):
        choice = answer.json()["choices"][0]
        prompt = prompt_token_ids(tokenizer, body["prompt"])
        assert choice["prompt_token_ids"] == prompt
        assert choice["token_ids"] == alone.tokens, body
        assert choice["finish_reason"] == alone.finish_reason
    # some continuations run up to the end of the context
    assert any(len(prompt_token_ids(tokenizer, b["prompt"])) + b["max_tokens"] == 64 for b in bodies)


def test_a_sampled_completion_follows_its_seed_streamed_and_not(server):
    def sampled(seed: int, stream: bool = False) -> list[str]:
        client = openai_client(server)
        texts = []
        for prompt in PROMPTS[:3]:
            answer = client.completions.create(model=MODEL, prompt=prompt, max_tokens=12, temperature=1.0, top_p=0.9,
                                               seed=seed, stream=stream)
            texts.append("".join(c.choices[0].text for c in answer) if stream else answer.choices[0].text)
        return texts

    first = sampled(5)
    assert sampled(5) == first and sampled(5, stream=True) == first
    assert sampled(6) != first


# ---------------------------------------------------------------------------------- errors
def test_bad_requests_are_refused_by_field_while_other_streams_go_on(server):
    client = openai_client(server)
    with ThreadPoolExecutor(8) as pool:
        streams = [pool.submit(lambda p: "".join(c.choices[0].text for c in client.completions.create(
            model=MODEL, prompt=p, max_tokens=12, temperature=0, stream=True)), p) for p in PROMPTS * 2]

        def post(body=None, path="/v1/completions", **kwargs):
            return httpx.post(server.url + path, timeout=30, **({"json": body} if body is not None else kwargs))

        json_header = {"Content-Type": "application/json"}
        cases = [
            (post({"prompt": "word " * 70}), 400, "prompt"),
            (post({"prompt": "the cat", "tempurature": 0}), 422, "tempurature"),
            (post({"prompt": "the cat", "max_tokens": "12"}), 422, "max_tokens"),
            (post({"prompt": "the cat", "max_tokens": -1}), 422, "max_tokens"),
            (post({"prompt": "the cat", "max_tokens": 100}), 400, "max_tokens"),
            (post({"prompt": "the cat", "n": 2}), 400, "n"),
            (post({"prompt": ["the cat", "a dog"]}), 400, "prompt"),
            (post({"prompt": 7}), 422, "prompt"),
            (post({"max_tokens": 3}), 422, "prompt"),
            (post({"prompt": "the cat", "stop": ["a", "b", "c", "d", "e"]}), 400, "stop"),
            (post({"prompt": "the cat", "model": "gpt-4"}), 404, "model"),
            (post(content=b'{"prompt": "\xff\xfe"}', headers=json_header), 400, None),
            (post(content=json.dumps({"prompt": "word " * 1000}).encode(), headers=json_header), 413, None),
            (post({"messages": [{"role": "user", "content": "hi"}]}, "/v1/chat/completions"), 400, "messages"),
            (post({"text": "no prompt"}, "/predict"), 422, "prompt"),
            (post([{"prompt": "the cat"}], "/predict_batch"), 404, None),
        ]
        answers = [f.result(timeout=120) for f in streams]
    for response, status, field in cases:
        assert response.status_code == status, response.text
        error = response.json()["error"]
        assert error["message"] and error.get("field") == field, error
        assert len(response.text.splitlines()) == 1
    assert 'did you mean "temperature"' in cases[1][0].json()["error"]["message"]
    assert "context of 64" in cases[0][0].json()["error"]["message"]
    assert "exceed the model's context of 64 tokens" in cases[4][0].json()["error"]["message"]
    assert "chat template" in cases[13][0].json()["error"]["message"]
    assert cases[11][0].json()["error"]["type"] == "malformed_json"
    alone = [completion(server, prompt=p, max_tokens=12, temperature=0).json()["choices"][0]["text"] for p in PROMPTS]
    assert answers == alone * 2


def test_the_demo_page_streams_a_completion_token_by_token(server):
    from playwright.sync_api import sync_playwright

    from test_serve_demo_page import CHROMIUM

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/setup.sh --tests as root (apt-get install chromium)"
    expected = completion(server, prompt="the big red", max_tokens=12).json()["choices"][0]["text"]
    info = httpx.get(server.url + "/info", timeout=10).json()
    assert info["generates"] and info["generation"]["max_new_tokens"] == 12 and info["context_length"] == 64
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready=true]", timeout=30_000)
            page.fill("#field-prompt", "the big red")
            page.click("#submit")
            page.wait_for_selector("body[data-done=true]", timeout=30_000)
            assert page.inner_text("#completion") == expected
            assert "length" in page.inner_text("#finish") and page.locator("#error").is_hidden()
            page.fill("#field-prompt", "word " * 70)
            page.click("#submit")
            page.wait_for_selector("#error:not([hidden])", timeout=30_000)
            assert "400" in page.inner_text("#error") and "context of 64" in page.inner_text("#error")
        finally:
            browser.close()


# ------------------------------------------------------------------------------- tensor parallel
def children_of(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def test_tensor_parallel_2_serving_gives_the_completions_of_one_process(server, cycle_lm_archive, tmp_path):
    """``--tensor-parallel 2``: the Llama's linears split over 2 processes by its training plan; greedy and
    seeded sampled completions, streamed or not and sharing steps, equal the one-process server's (which
    reads prompts whole and attends eagerly, this one 3 tokens a step, attending through the compiled loop on each
    rank's heads); SIGTERM
    drains and the other rank leaves with the server."""
    rng = random.Random(2)
    bodies = [{"prompt": " ".join(rng.choices(WORDS, k=rng.randint(1, 20))), "max_tokens": rng.randint(1, 20),
               "temperature": 0} for _ in range(12)]
    bodies += [{"prompt": p, "max_tokens": 12, "temperature": 1.0, "top_p": 0.9, "seed": 3} for p in PROMPTS]

    def texts(url: str, stream: bool) -> list[str]:
        answers = post_concurrently(url + "/v1/completions", [{**body, "stream": stream} for body in bodies], 8)
        assert {answer.status for answer in answers} == {200}
        if not stream:
            return [answer.body["choices"][0]["text"] for answer in answers]
        return ["".join(json.loads(line[6:])["choices"][0]["text"] for line in answer.body.splitlines()
                        if line.startswith("data: {")) for answer in answers]

    expected = texts(server.url, stream=False)
    # prompts read 3 tokens a step: rank 0 sends the other rank its prefill budget, so both chunk them alike
    with ServerProcess(cycle_lm_archive, tmp_path, "--tensor-parallel", "2", "--max-prefill-tokens", "3",
                       "--dtype", "float32", "--decode-attention", "compiled") as split:
        info = httpx.get(split.url + "/info", timeout=10).json()
        assert info["tensor_parallel"] == {"processes": 2, "split_parameters": 14}  # 7 linears in each of 2 layers
        others = children_of(split.pid)
        assert len(others) >= 1
        assert texts(split.url, stream=False) == expected
        assert texts(split.url, stream=True) == expected
        assert split.stop() == 0, split.output()[-3000:]
    wait_for(lambda: not any(Path(f"/proc/{pid}").exists() for pid in others), 10, "the other rank to leave")
    refused = run_cli("serve", str(cycle_lm_archive), "--port", "0", "--tensor-parallel", "3", timeout=120)
    assert refused.returncode == 2
    assert ("error: --tensor-parallel 3: 3 does not divide the model's num_attention_heads (4); 3 does not divide "
            "the model's num_key_value_heads (2); 3 does not divide the model's intermediate_size (64)") \
        in refused.stderr.splitlines()


# ----------------------------------------------------------- limits, disconnects, chat, drain
@contextlib.contextmanager
def long_streams(server: ServerProcess, count: int, max_tokens: int = 3000):
    """``count`` streams that would run for 15 s or more (this model never ends these prompts early), each
    read up to its first chunk, so each holds a row; they are dropped when the block ends."""
    with contextlib.ExitStack() as stack:
        opened = []
        for k in range(count):
            client = stack.enter_context(httpx.Client(timeout=60))
            response = stack.enter_context(client.stream("POST", server.url + "/v1/completions", json={
                "prompt": PROMPTS[k % len(PROMPTS)], "max_tokens": max_tokens, "stream": True}))
            assert response.status_code == 200
            lines = response.iter_lines()
            assert next(line for line in lines if line).startswith("data: {")
            opened.append((client, response, lines))
        yield opened


def test_2000_requests_streamed_and_not_grow_the_servers_memory_by_less_than_100_mb(server):
    """Random prompts and ``max_tokens``, half of them streamed, from 8 closed-loop clients, after 200 to warm up
    (2000, not 5000: 20 s less of CI; ``scripts/soak_serve.py`` is the long run that looks for slow growth)."""
    rng = random.Random(1)

    def bodies(count: int) -> list[dict]:
        return [{"prompt": " ".join(rng.choices(WORDS, k=rng.randint(1, 24))), "max_tokens": rng.randint(1, 4),
                 "stream": rng.random() < 0.5} for _ in range(count)]

    url = server.url + "/v1/completions"
    assert {answer.status for answer in post_concurrently(url, bodies(200), clients=8)} == {200}
    before = server.rss_bytes()
    answers = post_concurrently(url, bodies(2000), clients=8)
    after = server.rss_bytes()
    assert {answer.status for answer in answers} == {200}
    print(f"2000 requests: resident memory {before / 2**20:.1f} -> {after / 2**20:.1f} MiB")
    assert after - before < 100 * 2**20, f"resident memory grew by {(after - before) / 2**20:.1f} MiB"


def test_a_full_queue_answers_503_at_once_and_a_request_waiting_past_its_timeout_gets_504(small_server):
    with long_streams(small_server, 4), ThreadPoolExecutor(4) as pool:  # the batch (4 rows) is full
        started = time.perf_counter()
        waiting = [pool.submit(completion, small_server, prompt="sat", max_tokens=4) for _ in range(4)]
        wait_for(lambda: small_server.metric("distrain_queue_depth") == 4, 10, "4 requests waiting")
        refused = completion(small_server, prompt="sat", max_tokens=4)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
        assert refused.json()["error"]["type"] == "overloaded"
        timed_out = [f.result(timeout=30) for f in waiting]
        seconds = time.perf_counter() - started
        assert [r.status_code for r in timed_out] == [504] * 4 and seconds >= 2, seconds  # not before the deadline
        assert all(r.json()["error"]["type"] == "timeout" for r in timed_out)
        assert small_server.metric('distrain_generations_cancelled_total{reason="timeout"}') == 4
        assert small_server.metric("distrain_running_batch_size") == 4  # the streams ran on meanwhile


def test_four_streams_dropped_mid_stream_leave_the_batch_and_four_new_requests_complete(small_server):
    dropped_before = small_server.metric('distrain_generations_cancelled_total{reason="disconnected"}')
    tokens_before = small_server.metric("distrain_generated_tokens_total")
    with long_streams(small_server, 4) as streams:
        for _, _, lines in streams:  # a few tokens more each, then the clients go
            for _ in range(3):
                next(line for line in lines if line)
    dropped = wait_for(lambda: small_server.metric('distrain_generations_cancelled_total{reason="disconnected"}')
                       - dropped_before == 4 and small_server.metric("distrain_running_batch_size") == 0, 10,
                       "the 4 dropped streams to leave the batch")
    assert dropped
    # a client that stops waiting for a whole (not streamed) completion is noticed as soon as it closes
    with pytest.raises(httpx.ReadTimeout):
        httpx.post(small_server.url + "/v1/completions", json={"prompt": "sat", "max_tokens": 3000},
                   timeout=httpx.Timeout(30, read=0.5))
    wait_for(lambda: small_server.metric('distrain_generations_cancelled_total{reason="disconnected"}')
             - dropped_before == 5 and small_server.metric("distrain_running_batch_size") == 0, 10,
             "the abandoned request to leave the batch")
    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda p: completion(small_server, prompt=p, max_tokens=8), PROMPTS[:4]))
    assert [a.status_code for a in answers] == [200] * 4
    assert all(a.json()["usage"]["completion_tokens"] == 8 for a in answers)
    print(f"4 new requests after the drop: {time.perf_counter() - started:.2f} s")
    # the dropped rows did not run on to their 3000 tokens
    assert small_server.metric("distrain_generated_tokens_total") - tokens_before < 2000


def test_chat_completions_apply_the_tokenizers_chat_template(small_server):
    client = openai_client(small_server)
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "the big red"}]
    chat = client.chat.completions.create(model=MODEL, messages=messages, max_tokens=10, temperature=0)
    templated = "system: be brief\nuser: the big red\nassistant:"
    plain = completion(small_server, prompt=templated, max_tokens=10, temperature=0).json()
    assert chat.choices[0].message.content == plain["choices"][0]["text"]
    assert chat.choices[0].message.role == "assistant" and chat.usage.prompt_tokens == plain["usage"]["prompt_tokens"]
    chunks = list(client.chat.completions.create(model=MODEL, messages=messages, max_tokens=10, stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == chat.choices[0].message.content
    bad_role = httpx.post(small_server.url + "/v1/chat/completions", timeout=30,
                          json={"messages": [{"role": "robot", "content": "hi"}]})
    assert bad_role.status_code == 422 and bad_role.json()["error"]["field"] == "messages.0.role"


def test_sigterm_finishes_the_16_streams_in_flight_and_exits_0(cycle_lm_archive, tmp_path):
    """A server of its own, with a context long enough for streams of 300 tokens (the drain outlasts the late request)."""
    overrides = {"model.config.max_position_embeddings": 4096}
    with ServerProcess(cycle_lm_archive, tmp_path / "server", "-o", json.dumps(overrides)) as server:
        streams = asyncio.run(streams_through_a_drain(server))
        for chunks in streams:
            assert chunks[-1] == {"done": True}
            assert chunks[-2]["choices"][0]["finish_reason"] == "length"  # all 300 tokens
        assert server.process.wait(30) == 0
        assert "drained" in server.output()


async def streams_through_a_drain(server: ServerProcess) -> list[list[dict]]:
    """16 streams of 300 tokens; SIGTERM once each has its first chunk; a new request then gets 503."""
    limits = httpx.Limits(max_connections=17, max_keepalive_connections=17)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        first_chunks = asyncio.Event()
        started = 0

        async def one(k: int) -> list[dict]:
            nonlocal started
            body = {"prompt": PROMPTS[k % len(PROMPTS)], "max_tokens": 300, "stream": True, "temperature": 0}
            chunks = []
            async with client.stream("POST", server.url + "/v1/completions", json=body) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if not line:
                        continue
                    if line == "data: [DONE]":
                        chunks.append({"done": True})
                        break
                    chunks.append(json.loads(line.removeprefix("data: ")))
                    if len(chunks) == 1:
                        started += 1
                        if started == 16:
                            first_chunks.set()
            return chunks

        streams = [asyncio.create_task(one(k)) for k in range(16)]
        await asyncio.wait_for(first_chunks.wait(), 60)
        server.signal(signal.SIGTERM)
        await asyncio.sleep(0.2)
        late = await client.post(server.url + "/v1/completions", json={"prompt": "too late"})
        assert late.status_code == 503 and late.json()["error"]["type"] == "draining"
        return await asyncio.gather(*streams)


# ------------------------------------------------------------------------ streamed text alone
def byte_level_tokenizer():
    """A tiny byte-level BPE (GPT-2's scheme): characters outside its merges split into bytes, so a
    token can end inside a character."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<end>"])
    tokenizer.train_from_iterator(["the cat sat on the mat", "a dog ran to the house"] * 20, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<end>")


@pytest.mark.parametrize("tokenizer_name", ["wordpiece", "byte_level"])
def test_streamed_text_joins_to_the_whole_decoding_and_stops_before_a_stop_string(tokenizer_name):
    from distrain.pretrained import load_tokenizer
    from distrain.serving.openai_api import IncrementalText

    tokenizer = load_tokenizer(TOKENIZER) if tokenizer_name == "wordpiece" else byte_level_tokenizer()
    end = tokenizer.sep_token_id if tokenizer_name == "wordpiece" else tokenizer.eos_token_id
    text = 'the cat sat: "naïve café", 日本語 🙂 on the mat'
    ids = tokenizer(text, add_special_tokens=False)["input_ids"] + [end]
    whole = tokenizer.decode(ids[:-1], skip_special_tokens=True)
    for stops, expected in [([], whole), (["on the"], whole[:whole.index("on the")]), (["never"], whole)]:
        streamed = IncrementalText(tokenizer, {end}, stops)
        pieces = []
        for token in ids:
            piece, stopped = streamed.add(token)
            pieces.append(piece)
            assert "\ufffd" not in piece  # never half a character
            if stopped:
                break
        else:
            pieces.append(streamed.rest())
        assert "".join(pieces) == streamed.text == expected, stops
        assert sum(1 for piece in pieces if piece) > 5  # token by token, not at the end


# ------------------------------------------------------------------------------- engine alone
@pytest.mark.parametrize("kind", ["padded", "slots"])
def test_the_engine_streams_each_request_its_own_tokens_and_keeps_its_limits(kind):
    """The engine without HTTP: concurrent requests get the tokens they get alone; a full queue, a
    deadline and a cancel are refused, timed out and dropped; a prompt whose prefill raises fails
    alone, a decode step that raises fails the rows it held, and the engine serves on; close() waits
    for the streams in flight. ``kind``: the padded batch, which reads a newcomer's prompt as it admits it,
    or the slot batch, which reads it in the next step's pass beside the decoding rows."""
    from generation.test_running_batch import END, PAD, requests, tiny

    from distrain.generation.decoding import GenerationSettings, Request, batch_class, generate
    from distrain.generation.admission import Limits
    from distrain.serving.batcher import Draining, QueueFull, RequestTimedOut
    from distrain.serving.generation_engine import GenerationEngine

    model = tiny("llama")
    failing = {"now": False}
    POISON = 3  # a prompt holding it fails its prefill (the random prompts hold ids 6 to 99)

    class Flaky(torch.nn.Module):
        """The model, failing while ``failing["now"]``."""

        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, input_ids, cache=None, logits_to_keep=0, **inputs):
            if failing["now"]:
                raise RuntimeError("the accelerator fell over")
            if input_ids.shape[1] > 1 and input_ids.eq(POISON).any():
                raise ValueError("this prompt breaks the model")
            return self.inner(input_ids=input_ids, cache=cache, logits_to_keep=logits_to_keep, **inputs)

    async def collect(stream) -> list[int]:
        return [event.token async for event in stream]

    async def main() -> None:
        engine = GenerationEngine(lambda: batch_class(kind)(Flaky(), {END}, PAD, 64), Limits(max_batch_size=3), max_queue=8,
                                  timeout_s=5.0)
        engine.start()
        rows = requests(8, seed=7)
        streams = [engine.submit(row) for row in rows]
        with pytest.raises(QueueFull):
            engine.submit(Request([1, 7]))
        engine.cancel(streams[6])
        outcomes = await asyncio.gather(*(collect(stream) for stream in streams))
        for row, tokens in zip(rows, outcomes):
            alone = generate(model, [row.prompt], row.settings, {END}, PAD, 64)[0].tokens
            assert tokens == ([] if row is rows[6] else alone), row.number

        # a prompt the model fails on fails alone: the running row and its admission-mate go on
        running = engine.submit(Request([1, 7, 8], GenerationSettings(max_new_tokens=60)))
        first = await running.__anext__()
        poisoned, mate = (engine.submit(Request(prompt, GenerationSettings(max_new_tokens=8)))
                          for prompt in ([1, 40, POISON], [1, 30, 31]))
        assert [event.error is not None for event in [e async for e in poisoned]] == [True]
        for stream, head in ((running, [first.token]), (mate, [])):
            tokens = head + await collect(stream)
            assert tokens == generate(model, [stream.request.prompt], stream.request.settings, {END}, PAD, 64)[0].tokens

        long = engine.submit(Request([1, 7, 8], GenerationSettings(max_new_tokens=60)))
        assert (await long.__anext__()).token is not None
        failing["now"] = True
        failed = [event async for event in long]
        assert failed[-1].error is not None and "fell over" in str(failed[-1].error)
        failing["now"] = False
        again = Request([1, 20, 21], GenerationSettings(max_new_tokens=5))
        assert await collect(engine.submit(again)) == generate(model, [again.prompt], again.settings, {END}, PAD, 64)[0].tokens

        engine.timeout_s = 0.0  # a deadline already past
        late = engine.submit(Request([1, 7], GenerationSettings(max_new_tokens=5)))
        with pytest.raises(RequestTimedOut):
            await late.__anext__()
        engine.cancel(late, "timeout")  # what the route does
        engine.timeout_s = 5.0
        last = engine.submit(Request([1, 9], GenerationSettings(max_new_tokens=10)))
        closing = asyncio.ensure_future(engine.close())
        await asyncio.sleep(0)
        with pytest.raises(Draining):
            engine.submit(Request([1, 7]))
        assert len(await collect(last)) == 10  # accepted before the drain: runs to its end
        await closing
        assert not engine._thread.is_alive() and not engine.active

    asyncio.run(asyncio.wait_for(main(), 60))  # a stream that never ends fails here instead of hanging


def test_dtype_bfloat16_serves_the_cycle_models_completions_and_says_when_the_cpu_makes_it_slow(server, cycle_lm_archive,
                                                                                             tmp_path):
    """``serve --dtype bfloat16``: the weights cast once at load (``/info``), tokens chosen from float logits,
    and the trained cycle model's greedy completions (wide margins) equal the float32 server's, with rows
    sharing steps, prompts read 3 tokens a step and the decoding rows attending through the compiled loop; a CPU
    without bfloat16 matrix instructions gets one warning at load."""
    from distrain.generation.packed_linears import cpu_packs

    bodies = [{"prompt": prompt, "max_tokens": 10, "temperature": 0} for prompt in PROMPTS]

    def completions(url: str) -> list[str]:
        answers = post_concurrently(url + "/v1/completions", bodies, len(bodies))
        assert {answer.status for answer in answers} == {200}
        return [answer.body["choices"][0]["text"] for answer in answers]

    with ServerProcess(cycle_lm_archive, tmp_path, "--dtype", "bfloat16", "--max-prefill-tokens", "3",
                       "--decode-attention", "compiled") as half:
        options = httpx.get(half.url + "/info", timeout=10).json()["options"]
        assert options["dtype"] == "bfloat16" and options["decode_attention"] == "compiled"
        assert completions(half.url) == completions(server.url)
        assert half.stop() == 0, half.output()[-3000:]
        warned = "warning: --dtype bfloat16: this CPU has no bfloat16 matrix instructions" in half.output()
        assert warned == (not cpu_packs(torch.bfloat16))
    refused = run_cli("serve", str(cycle_lm_archive), "--dtype", "float16", timeout=60)
    assert refused.returncode == 2 and "invalid choice: 'float16'" in refused.stderr
