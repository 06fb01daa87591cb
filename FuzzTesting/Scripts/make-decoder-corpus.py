#!/usr/bin/env python3
"""Writes one seed file per client request of Protocol/golden/*.json into Corpus/decoder/.

Placeholders of the transcripts ($SESSION, $capture:NAME, $NAME) are replaced by
plain values, so every seed is a request as a client would send it.
"""
import json
import pathlib
import re

root = pathlib.Path(__file__).resolve().parents[2]
out = root / "FuzzTesting" / "Corpus" / "decoder"
out.mkdir(parents=True, exist_ok=True)
for old in out.glob("golden-*.json"):
    old.unlink()


PARTICIPANTS = {"alice": "p1", "bob": "p2", "carol": "p3", "dave": "p4"}


def plain(value, key=None):
    if isinstance(value, str) and value.startswith("$"):
        if value == "$SESSION":
            return "harbour"
        if key == "seq":
            return 1
        if key == "epoch":
            return "9f2c"
        name = re.sub(r"^\$(capture:)?", "", value)
        return PARTICIPANTS.get(name, "p1")
    if isinstance(value, list):
        return [plain(v, key) for v in value]
    if isinstance(value, dict):
        return {k: plain(v, k) for k, v in value.items()}
    return value


count = 0
for transcript in sorted((root / "Protocol" / "golden").glob("*.json")):
    steps = json.loads(transcript.read_text())["steps"]
    sends = [plain(step["send"]) for step in steps if "send" in step]
    for i, request in enumerate(sends):
        name = f"golden-{transcript.stem}-{i:02d}.json"
        (out / name).write_text(json.dumps(request, separators=(",", ":"), sort_keys=True))
        count += 1
print(f"{count} seeds in {out.relative_to(root)}")

# libFuzzer's dictionary: the keys and short ASCII string values of the seeds.
keys, values = set(), set()


def tokens(value):
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            tokens(v)
    elif isinstance(value, list):
        for v in value:
            tokens(v)
    elif isinstance(value, str) and len(value) < 24 and value.isascii() and value.isprintable():
        values.add(value)


for seed in sorted(out.glob("golden-*.json")):
    tokens(json.loads(seed.read_text()))
lines = ["# Tokens of Protocol v1 requests (keys and values of the golden seeds), for FuzzDecoder."]
lines += [json.dumps(json.dumps(k) + ":") for k in sorted(keys)]
lines += [json.dumps(json.dumps(v)) for v in sorted(values)]
lines += [json.dumps(t) for t in ["null", "true", "false", "-0", "1e308", "\\u0000", "\\ud800", "[]", "{}"]]
(root / "FuzzTesting" / "Dictionaries" / "decoder.dict").write_text("\n".join(lines) + "\n")
