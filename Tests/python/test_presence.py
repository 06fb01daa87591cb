"""Presence over real sockets: reduced-accuracy locations are coarsened for everyone."""

from meridian_client import Client, run, snapshot


def test_reduced_accuracy_location_is_coarsened(server, session_id):
    async def scenario():
        alice = await Client.open(server.url, "alice")
        bob = await Client.open(server.url, "bob")
        try:
            await alice.join(session_id, "Alice", "viewer")
            await bob.join(session_id, "Bob", "viewer")
            precise = {"coordinate": {"latitude": 48.858370, "longitude": 2.294481}, "accuracy": 8, "heading": 120, "course": 45,
                       "tracking": "followWithHeading", "authorization": "reduced"}
            ack, own = await alice.ok({"type": "location", "location": precise})
            seen, _ = await bob.until(lambda m: m["type"] == "location")
            own = [m for m in own if m["type"] == "location"]
            for m in (own[0], seen):
                assert m["transient"] is True and m["seq"] == ack["seq"], m
                loc = m["location"]
                for axis in ("latitude", "longitude"):
                    v = loc["coordinate"][axis]
                    assert abs(v / 0.05 - round(v / 0.05)) < 1e-6, f"{axis} {v} is not on the 0.05 degree grid"
                    assert abs(v - precise["coordinate"][axis]) <= 0.025 + 1e-9
                assert loc["accuracy"] >= 5000
                assert "heading" not in loc and "course" not in loc
                assert loc["authorization"] == "reduced" and loc["tracking"] == "followWithHeading"
            snap = await snapshot(server.url, session_id)
            (a,) = [p for p in snap["participants"] if p["id"] == alice.participant]
            assert a["location"] == seen["location"]
            # Clearing is discrete.
            ack, own = await alice.ok({"type": "location", "location": None})
            own = [m for m in own if m["type"] == "location"]
            assert own[0]["location"] is None and "transient" not in own[0] and own[0]["seq"] == ack["seq"]
        finally:
            await alice.close()
            await bob.close()

    run(scenario())
