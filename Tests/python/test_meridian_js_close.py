"""meridian.js after each close code the server sends (SPEC §10, `CLOSE_CODES`), in headless
Chromium against the real server with tokens checked:
- two dashboard pages with the same token: the older is closed with 4010, stays closed and
  says so, while the newer stays live;
- real closes the client caused (a binary frame: 1003; too many invalid requests: 4009) leave it
  closed with status `stopped`;
- for every code of the table, a close with that code on a live connection: the client
  reconnects and resumes (4012 at once), asks `renewToken` after 4401 and reconnects with the new
  token, or stays closed with the status that says why."""

import pytest

from dashboard_support import http_url, page  # noqa: F401
from http_raw import request
from test_auth import auth_server, claims, hs256, secret_file  # noqa: F401 (test_auth's server and its secret)


def mint(sub, role, session="close-*", ttl=600):
    """A token for test_auth's server (HS256, audience `meridian`)."""
    return hs256(claims(sub, role, session=session, ttl=ttl, aud="meridian"))


def test_the_older_of_two_pages_with_one_token_stays_closed_with_4010_and_says_so(auth_server, page):
    owner = mint("root", "owner")
    assert request(auth_server, "POST", "/api/sessions", {"id": "close-tabs"}, token=owner).status == 201
    token = mint("wall", "dashboard")
    url = http_url(auth_server, f"?session=close-tabs#token={token}")
    page.open(url)
    page.wait(lambda s: s["status"] == "live", "the first page live")
    first = page.driver.current_window_handle
    page.driver.switch_to.new_window("tab")
    page.open(url)
    page.wait(lambda s: s["status"] == "live", "the second page live")
    second = page.driver.current_window_handle

    page.driver.switch_to.window(first)
    state = page.wait(lambda s: s["status"] == "replaced", "the first page replaced")
    assert page.js("return document.getElementById('status').textContent").startswith("replaced"), "the page says why"
    # The second page keeps the session through a round trip of its own: the first never took it back.
    page.driver.switch_to.window(second)
    page.wait(lambda s: s["status"] == "live", "the second page still live")
    page.driver.switch_to.window(first)
    assert page.state()["status"] == "replaced", state


PROBE = """
const [url, session, code, fresh] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const { MeridianClient, closeAdvice } = await import("/dashboard/meridian.js");
  const asked = [];
  const client = new MeridianClient(url, { session, name: "Probe", role: "editor",
    renewToken: () => { asked.push(code); return fresh; } });
  const statuses = [];
  client.addEventListener("status", (e) => statuses.push(e.detail));
  const until = (holds, what) => new Promise((resolve, reject) => {
    const check = () => { if (holds()) { client.removeEventListener("status", check); resolve(); } };
    client.addEventListener("status", check);
    check();
    setTimeout(() => reject(new Error(`never ${what}: ${client.status} after ${statuses}`)), 10000);
  });
  client.connect();
  await until(() => client.status === "live", "live");
  const firstSocket = client.socket;
  const epoch = client.state.epoch;
  const handler = firstSocket.onclose;
  firstSocket.onclose = null;
  firstSocket.close(1000);
  const openedAt = performance.now();
  handler.call(firstSocket, new CloseEvent("close", { code }));
  const advice = closeAdvice(code);
  if (advice === "reconnect" || advice === "reconnect-now" || advice === "renew-token") {
    await until(() => client.status === "live" && client.socket !== firstSocket, "live again");
  } else {
    await until(() => client.status !== "disconnected", "settled");
  }
  const result = { advice, status: client.status, closeCode: client.closeCode, closeAdvice: client.closeAdvice,
                   socket: client.socket !== null, closed: client.closed, asked: asked.length, url: client.url,
                   sameEpoch: client.state.epoch === epoch, after: performance.now() - openedAt, statuses };
  client.close();
  return result;
})().then(done, (e) => done({ error: String(e) }));
"""

STAYS_CLOSED = {"replaced": "replaced", "fix-client": "stopped", "give-up": "stopped"}


def test_every_close_code_gets_the_answer_of_the_table(auth_server, page):
    page.open(http_url(auth_server))
    codes = page.js("return import('/dashboard/meridian.js').then((m) => Object.keys(m.CLOSE_CODES).map(Number))")
    assert sorted(codes) == [1000, 1001, 1002, 1003, 1007, 1009, 1011, 4008, 4009, 4010, 4012, 4401]
    for code in codes + [1006]:
        token = mint(f"probe{code}", "editor")
        fresh = mint(f"probe{code}", "editor", ttl=601)  # another token than the first
        ws = f"ws://{auth_server.host}:{auth_server.port}/?access_token={token}"
        result = page.driver.execute_async_script(PROBE, ws, f"close-{code}", code, fresh)
        assert "error" not in result, (code, result)
        assert result["closeCode"] == code, result
        if result["advice"] in STAYS_CLOSED:
            assert result["status"] == STAYS_CLOSED[result["advice"]] and not result["socket"] and result["closed"], (code, result)
        else:
            assert result["status"] == "live" and result["sameEpoch"], (code, result)
            assert result["asked"] == (1 if result["advice"] == "renew-token" else 0), (code, result)
            assert (fresh in result["url"]) == (result["advice"] == "renew-token"), (code, result)


REAL_CLOSE = """
const [url, session, how] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const { MeridianClient } = await import("/dashboard/meridian.js");
  const client = new MeridianClient(url, { session, name: "Rude", role: "editor" });
  const until = (holds, what) => new Promise((resolve, reject) => {
    const check = () => { if (holds()) { client.removeEventListener("status", check); resolve(); } };
    client.addEventListener("status", check);
    check();
    setTimeout(() => reject(new Error(`never ${what}: ${client.status}`)), 15000);
  });
  client.connect();
  await until(() => client.status === "live", "live");
  if (how === "binary") client.socket.send(new Uint8Array([1, 2, 3]));
  else for (let i = 0; i < 120 && client.socket; i++) client.socket.send("not json");
  await until(() => client.status === "stopped", "stopped");
  return { closeCode: client.closeCode, closeAdvice: client.closeAdvice, socket: client.socket !== null };
})().then(done, (e) => done({ error: String(e) }));
"""


@pytest.mark.parametrize("how,code,advice", [("binary", 1003, "fix-client"), ("garbage", 4009, "give-up")])
def test_a_close_the_client_caused_leaves_it_stopped(auth_server, page, how, code, advice):
    page.open(http_url(auth_server))
    token = mint(f"rude-{how}", "editor")
    ws = f"ws://{auth_server.host}:{auth_server.port}/?access_token={token}"
    result = page.driver.execute_async_script(REAL_CLOSE, ws, f"close-rude-{how}", how)
    assert result == {"closeCode": code, "closeAdvice": advice, "socket": False}, result
