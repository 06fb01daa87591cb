#!/usr/bin/env python3
"""Writes the hand-made seeds of the session fuzzer into Corpus/session/.

Byte 0 picks the drag policy (0 exclusive, 1 priority, 2 last-writer-wins; +3 for a
1 s lease). Each step is [operation, slot, parameters...] as SessionHarness reads
them: slots 0 owner, 1 and 2 editors, 3 viewer, 4 hidden viewer. An update, a remove or
a drag's start plus MATCH, AHEAD or BEHIND carries `ifRevision`: the annotation's
revision, one past it, one before it. DESELECT plus 20 is an undo, plus 40 a redo.
"""
import pathlib

ADD, UPDATE, REMOVE, SELECT, DESELECT, CALLOUT, HIDE, TAP, DRAG = 0, 1, 2, 3, 4, 5, 6, 7, 8
CAMERA, LEASE, RELEASE, FOLLOW, LOCATION, MAPLOAD, CONFIGURE, LEAVE, JOIN, TIME = range(10, 20)
NONE, STARTING, DRAGGING, CANCELING, ENDING = range(5)
MATCH, AHEAD, BEHIND = 20, 40, 60
UNDO, REDO = DESELECT + 20, DESELECT + 40


def drag(slot, state, coordinate=None, annotation=0, condition=0):
    at = [0] if coordinate is None else [1, coordinate]
    return [DRAG + condition, slot, *at, annotation, state]


seeds = {
    "exclusive-conflict-expiry": [0,
        *drag(1, STARTING), *drag(2, STARTING), *drag(1, DRAGGING, 1), *[UPDATE, 2, 0, 0, 4],
        *[TIME, 0, 5], *drag(0, STARTING), *drag(0, DRAGGING, 4), *drag(0, ENDING), *drag(0, NONE)],
    "priority-preempt": [1,
        *drag(1, STARTING), *drag(1, DRAGGING, 1), *drag(0, STARTING), *drag(1, DRAGGING, 4),
        *drag(0, CANCELING), *[LEAVE, 0], *[JOIN, 0], *drag(2, STARTING), *[LEAVE, 2]],
    "last-writer-wins-moves": [2,
        *drag(1, STARTING), *drag(2, STARTING), *drag(1, DRAGGING, 1), *drag(2, DRAGGING, 4),
        *drag(1, ENDING), *drag(2, CANCELING), *[CONFIGURE, 0, 0, 0]],
    "selection-callout-remove": [3,
        *[ADD, 1, 1, 0, 0], *[SELECT, 3, 1], *[CALLOUT, 1, 1, 1, 1], *[TAP, 2, 1],
        *[UPDATE, 1, 1, 5], *[SELECT, 2, 0], *[REMOVE, 1, 0], *[LEAVE, 1], *[JOIN, 1]],
    "camera-lease-location": [0,
        *[LEASE, 1, 0], *[CAMERA, 1, 0, 1, 2, 1, 0], *[LEASE, 0, 1], *[CAMERA, 3, 1, 3, 1, 1],
        *[FOLLOW, 2, 2, 0], *[LOCATION, 3, 1], *[CALLOUT, 1, 2, 3, 0], *[LOCATION, 3, 4],
        *[CONFIGURE, 0, 3, 1, 2], *[CAMERA, 2, 1, 3, 1, 0], *[MAPLOAD, 4, 2], *[RELEASE, 0]],
    "conditional-writes": [0,
        *[UPDATE + MATCH, 1, 0, 5], *[UPDATE + BEHIND, 2, 0, 4], *[UPDATE + AHEAD, 2, 0, 4],
        *drag(2, STARTING, condition=BEHIND), *drag(1, STARTING, condition=MATCH), *drag(1, ENDING, 1),
        *[REMOVE + AHEAD, 2, 0], *[REMOVE + MATCH, 3, 0], *[REMOVE + MATCH, 2, 0]],
    "undo-redo": [0,
        *[UPDATE, 1, 0, 5], *[UNDO, 1], *[REDO, 1], *[UPDATE, 2, 0, 4], *[UNDO, 1], *[UNDO, 3],
        *drag(1, STARTING), *drag(1, DRAGGING, 1), *drag(1, ENDING), *[UNDO, 2], *[UNDO, 1], *[REDO, 1],
        *[REMOVE, 2, 0], *[UNDO, 2], *[ADD, 1, 1, 0, 0], *[UNDO, 1], *[REDO, 1], *[LEAVE, 1], *[UNDO, 1]],
}

out = pathlib.Path(__file__).resolve().parents[1] / "Corpus" / "session"
out.mkdir(parents=True, exist_ok=True)
for name, data in seeds.items():
    (out / f"seed-{name}").write_bytes(bytes(data))
print(f"{len(seeds)} seeds in {out}")
