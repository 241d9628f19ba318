// The demo page: one input per field of the archive's reader (from /info), POST /predict, and the
// predicted label with its probabilities, or the server's own error message when a request fails.
// For a language model (info.generates) the prompt goes to /v1/completions with stream: true and the
// completion appears token by token as the server-sent events arrive. A server started with --api-key
// answers 401 without its key: the page then asks for it, keeps it for this tab (sessionStorage) and sends
// it as "Authorization: Bearer KEY" with every request.
"use strict";

let info = null;

function apiKey() { return sessionStorage.getItem("distrain-api-key"); }

function send(url, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  if (apiKey()) headers["Authorization"] = `Bearer ${apiKey()}`;
  return fetch(url, Object.assign({}, options, { headers }));
}

async function askForKey(response) {
  if (response.status !== 401) return false;
  const wrong = apiKey() !== null;
  sessionStorage.removeItem("distrain-api-key");
  show(document.getElementById("key-form"), true);
  show(document.getElementById("form"), false);
  document.getElementById("model").textContent = wrong ? "that key was refused" : "";
  showError(await errorMessage(response));
  document.getElementById("api-key").focus();
  return true;
}

function useKey(event) {
  event.preventDefault();
  sessionStorage.setItem("distrain-api-key", document.getElementById("api-key").value);
  show(document.getElementById("key-form"), false);
  show(document.getElementById("form"), true);
  show(document.getElementById("error"), false);
  document.getElementById("form").addEventListener("submit", submit);
document.getElementById("key-form").addEventListener("submit", useKey);
start();
}

function show(element, visible) { element.hidden = !visible; }

function showError(message) {
  const error = document.getElementById("error");
  error.textContent = message;
  show(error, true);
  show(document.getElementById("result"), false);
}

async function errorMessage(response) {
  try {
    const body = await response.json();
    if (body && body.error) return `${response.status} ${body.error.type}: ${body.error.message}`;
  } catch (_) { /* not JSON: fall through */ }
  return `${response.status} ${response.statusText}`;
}

function buildForm() {
  const fields = document.getElementById("fields");
  fields.textContent = "";
  for (const [name, kind] of Object.entries(info.input_fields)) {
    const label = document.createElement("label");
    label.htmlFor = `field-${name}`;
    label.textContent = kind === "json" ? `${name} (JSON)` : name;
    const input = document.createElement("textarea");
    input.id = `field-${name}`;
    input.name = name;
    input.dataset.kind = kind;
    fields.append(label, input);
  }
  document.getElementById("model").textContent =
    `${info.model} from ${info.archive}` + (info.labels ? ` — labels: ${info.labels.join(", ")}` : "");
  if (info.generates) document.getElementById("submit").textContent = "Generate";
}

async function streamCompletion(prompt) {
  const output = document.getElementById("completion");
  const finish = document.getElementById("finish");
  output.textContent = "";
  finish.textContent = "";
  delete document.body.dataset.done;
  const response = await send("/v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ prompt, stream: true }),
  });
  if (await askForKey(response)) return;
  if (!response.ok) { showError(await errorMessage(response)); return; }
  show(document.getElementById("error"), false);
  show(document.getElementById("generated"), true);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      if (!event.startsWith("data: ")) continue;
      const data = event.slice(6);
      if (data === "[DONE]") { document.body.dataset.done = "true"; return; }
      const chunk = JSON.parse(data);
      if (chunk.error) { showError(`${chunk.error.type}: ${chunk.error.message}`); return; }
      output.textContent += chunk.choices[0].text;
      if (chunk.choices[0].finish_reason) finish.textContent = `finish reason: ${chunk.choices[0].finish_reason}`;
    }
  }
}

function readForm() {
  const record = {};
  for (const input of document.querySelectorAll("#fields textarea")) {
    if (input.dataset.kind === "json") {
      try { record[input.name] = JSON.parse(input.value); }
      catch (_) { record[input.name] = input.value; }  // let the server name the problem
    } else {
      record[input.name] = input.value;
    }
  }
  return record;
}

function showPrediction(prediction) {
  show(document.getElementById("error"), false);
  document.getElementById("label").textContent = prediction.label ?? JSON.stringify(prediction);
  const body = document.querySelector("#probs tbody");
  body.textContent = "";
  const probs = prediction.probs || [];
  probs.forEach((p, i) => {
    const row = body.insertRow();
    row.insertCell().textContent = info.labels ? info.labels[i] : String(i);
    const cell = row.insertCell();
    const bar = document.createElement("span");
    bar.className = "bar";
    bar.style.width = `${Math.round(p * 100)}px`;
    cell.append(bar, document.createTextNode(p.toFixed(4)));
  });
  show(document.getElementById("probs"), probs.length > 0);
  show(document.getElementById("result"), true);
}

async function submit(event) {
  event.preventDefault();
  const button = document.getElementById("submit");
  button.disabled = true;
  try {
    if (info.generates) { await streamCompletion(Object.values(readForm())[0]); return; }
    const response = await send("/predict", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(readForm()),
    });
    if (await askForKey(response)) return;
    if (!response.ok) showError(await errorMessage(response));
    else showPrediction(await response.json());
  } catch (error) {
    showError(`the server could not be reached: ${error}`);
  } finally {
    button.disabled = false;
  }
}

async function start() {
  try {
    const response = await send("/info");
    if (await askForKey(response)) return;
    if (!response.ok) { showError(await errorMessage(response)); return; }
    info = await response.json();
    buildForm();
    document.body.dataset.ready = "true";
  } catch (error) {
    showError(`the server could not be reached: ${error}`);
  }
}

document.getElementById("form").addEventListener("submit", submit);
document.getElementById("key-form").addEventListener("submit", useKey);
start();
