// Edits made while disconnected (SPEC §6.3): an EditQueue sends an app's annotation edits
// at once while its MeridianClient is live, keeps them while it is not (in localStorage,
// so they survive a reload), and sends them in order once it is live again, each
// conditional on the revision the app saw when it made it. Every edit settles with an
// `edit` event: `{edit, outcome: "applied", ack}`, `{edit, outcome: "conflict", annotation,
// revision, error}` (someone changed it since: theirs is `annotation`), or `{edit, outcome:
// "refused", error}`.
//
//   const edits = new EditQueue(client);
//   edits.addEventListener("edit", (e) => show(e.detail));
//   edits.submit("annotation.update", { id: "a", changes: { title: "Quay" } });

import { MeridianError } from "/dashboard/meridian.js";

const EDITS = new Set(["annotation.add", "annotation.update", "annotation.remove"]);

export class EditQueue extends EventTarget {
  /// `storage` (default localStorage) keeps the waiting edits under `key` (default per session
  /// and name); at most `limit` wait.
  constructor(client, { limit = 256, storage = globalThis.localStorage ?? null, key } = {}) {
    super();
    this.client = client;
    this.limit = limit;
    this.storage = storage;
    this.key = key ?? `meridian.edits.${client.join.session}.${client.join.name}`;
    const saved = this._load();
    /// The edits not settled yet, oldest first: `{id, type, fields}`.
    this.edits = saved.edits;
    this.nextId = saved.next;
    this.flushing = false;
    client.addEventListener("status", (e) => { if (e.detail === "live") this.flush(); });
    this.flush();
  }

  /// Queues an edit (and sends it now when live); returns it. Throws when it is not an
  /// annotation edit or `limit` edits wait already.
  submit(type, fields) {
    if (!EDITS.has(type)) throw new Error(`${type} is not an edit the queue keeps (annotation.add, annotation.update, annotation.remove)`);
    if (this.edits.length >= this.limit) throw new Error(`${this.limit} edits are waiting already (the queue's limit)`);
    const f = { ...fields };
    if (type !== "annotation.add" && f.ifRevision === undefined) {
      const revision = this.client.revisionOf(f.id);
      if (revision !== undefined) f.ifRevision = revision;
    }
    const edit = { id: this.nextId++, type, fields: f };
    this.edits.push(edit);
    this._save();
    this.flush();
    return edit;
  }

  /// Sends the waiting edits one by one while the client is live. A lost connection leaves
  /// the rest, and the one in flight, for the next time it is live.
  async flush() {
    if (this.flushing || this.client.status !== "live") return;
    this.flushing = true;
    try {
      while (this.edits.length > 0 && this.client.status === "live") {
        const edit = this.edits[0];
        let settled;
        try {
          settled = { outcome: "applied", ack: await this.client.request(edit.type, edit.fields) };
        } catch (e) {
          if (!(e instanceof MeridianError)) break; // not answered: sent again when live
          settled = e.code === "revision_conflict"
            ? { outcome: "conflict", annotation: e.annotation, revision: e.revision, error: e }
            : { outcome: "refused", error: e };
        }
        this.edits.shift();
        this._save();
        this.dispatchEvent(new CustomEvent("edit", { detail: { edit, ...settled } }));
      }
    } finally {
      this.flushing = false;
    }
  }

  _load() {
    try {
      const saved = JSON.parse(this.storage?.getItem(this.key) ?? "null");
      if (saved && Array.isArray(saved.edits)) return { edits: saved.edits, next: saved.next ?? saved.edits.length + 1 };
    } catch { /* unreadable: start empty */ }
    return { edits: [], next: 1 };
  }

  _save() {
    if (!this.storage) return;
    if (this.edits.length === 0) this.storage.removeItem(this.key);
    else this.storage.setItem(this.key, JSON.stringify({ next: this.nextId, edits: this.edits }));
  }
}
