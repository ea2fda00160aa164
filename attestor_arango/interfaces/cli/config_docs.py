"""docs/configuration.md, generated from the config model so the two cannot drift apart.

``python -m attestor_arango.interfaces.cli.config_docs > docs/configuration.md``
rewrites it; a test fails when the file differs from what this prints, or when a
config key has no description here (or in its ``Field(description=...)``).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from pydantic import BaseModel, SecretStr

from attestor_arango.config import (
    _ENV,
    API_KEYS_ENV,
    CONFIG_FILE_ENV,
    CONFIG_FILENAME,
    HOME_ENV,
    IDENTITY_ENV,
    TRACE_FILENAME,
    Config,
)
from attestor_arango.governance.retention import MAX_POLICIES
from attestor_arango.ingest.consolidation import EPISODE_TEXT_BUDGET
from attestor_arango.interfaces.api.auth import DEFAULT_MAX_AGENTS
from attestor_arango.retrieval.config import RetrievalConfig

DESCRIPTIONS: dict[str, str] = {
    "backend": "`embedded` (one SQLite file, nothing to set up) or `arangodb`",
    "path": "embedded store: the SQLite file, or a directory that holds `memory.db` "
    "(default `$ATTESTOR_HOME`, else `$XDG_DATA_HOME/attestor-arango`)",
    "text_index": "embedded text lane: `memory` (exact BM25 over the view, ~89 MB per 100k "
    "memories once read) or `fts5` (SQLite FTS5, no memory cost)",
    "cache_rows": "rows each embedded in-memory cache (vectors, text) holds over all tenants "
    "before the least recently read tenant is dropped",
    "embedder": "`auto` (best available offline), `hashing`, `ollama`, `openai` or `local`",
    "embedder_model": "model name for the `ollama` / `openai` embedders",
    "embedder_dimension": "vector size, when the embedder cannot report it",
    "local_model_path": "directory with `model.onnx` and `tokenizer.json` for `local`",
    "skip_ollama_probe": "`auto` embedder: do not ask a local Ollama first",
    "blas_threads": "BLAS threads the CLI and its servers set for their process (`0` leaves "
    "BLAS alone); the library never changes them",
    "ollama_url": "Ollama server for the `ollama` embedder",
    "openai_base_url": "OpenAI-compatible endpoint for the `openai` embedder",
    "openai_api_key": "key for that endpoint (a secret: never printed or exported)",
    "max_content_chars": "longest memory text or query accepted; longer is a `ValidationError`",
    "max_turns_per_call": "turns one `add_turns` call stores (in one transaction, which the "
    "store's other writes wait for); more is a `ValidationError` (422 on REST)",
    "arango": "ArangoDB connection (backend `arangodb`)",
    "arango.url": "server URL",
    "arango.database": "database name",
    "arango.username": "user",
    "arango.password": "password (a secret)",
    "arango.verify_tls": "`true`, `false`, or the path of a CA bundle",
    "arango.vector_min_docs": "below this many vectors a tenant is served by exact cosine",
    "retrieval": "recall tuning; the keys are listed under *Retrieval* below, an unknown "
    "key is an error",
    "trace": "JSONL recall traces, one line per pipeline step, one file per tenant",
    "trace.enabled": "write traces (`ATTESTOR_TRACE=1`)",
    "trace.path": f"where traces go; with tracing on and no path: `{TRACE_FILENAME}` in the "
    "data directory. Each tenant's events are written to `<path>.tenants/<digest>.jsonl` "
    "(the first 32 hex digits of the SHA-256 of the tenant id); the file `<path>` itself is "
    "the one earlier versions shared between tenants, still read by `recall_trace` and "
    "cleaned by `purge_user`, no longer written (delete it when its recalls are not needed). "
    "Every path a store traced to is listed in `<db>.traces` beside it (ArangoDB: the data "
    "directory), so `purge_user` also erases the tenant under a path since changed or "
    "switched off. A trace records every input of a recall but the query; the recall id is "
    "keyed by a key the store keeps per tenant (in the store itself, so a read-only opener "
    "needs no write and every opener agrees; a `<db>.recall-key` file of earlier versions is "
    "still read), so a trace file confirms no guessed query to a reader without the store",
    "trace.include_content": "also write memory text, the query and lane errors' messages "
    "into the trace (off: ids, scores and error types)",
    "trace.max_bytes": "a tenant's trace file past this many bytes is rotated to `<file>.1` "
    "(an event larger than the bound gets a file of its own)",
    "trace.keep": "rotated trace files kept per tenant (`<file>.1` newest ... `<file>.<keep>`); "
    "the oldest is dropped, so a tenant's traces take at most `(keep + 1) * max_bytes` bytes "
    "(one tenant's recalls never rotate another's away); `purge_user` deletes the tenant's "
    "files and erases its events from the shared file of earlier versions",
    "signing": "Ed25519 provenance signatures over the id, agent, creation time and content hash",
    "signing.enabled": "sign every new memory",
    "signing.key_path": "PEM private key, which must exist; without it a key is made on "
    "first use in the data directory",
    "retention": "retention policies, a list (format under *Retention* below)",
    "llm": "LLM for ingest and query expansion: `provider` (`none`, `ollama`, `openai`), "
    "`model`, `base_url`, `api_key`, `timeout` (60 s), `retries` (3), `backoff` (0.5 s)",
}

_IDENTITY = [name for key, name in IDENTITY_ENV.items() if key != "token_budget"]
# the variables config.py names beyond the settings' own (the names are config.py's)
OTHER_ENV: dict[str, str] = {
    CONFIG_FILE_ENV: "the config file (else the platform config file, see above)",
    HOME_ENV: "directory of the embedded store when `path` is not set",
    ", ".join(_IDENTITY): "the CLI's identity (default: SOLO, "
    "orchestrator of tenant `local`, namespace `inbox`; `ATTESTOR_TENANT`, "
    "`ATTESTOR_NAMESPACE`, `ATTESTOR_ROLE` or `ATTESTOR_READ_ONLY` set but empty is "
    "refused, not read as the default)",
    IDENTITY_ENV["token_budget"]: "default recall token budget of the CLI",
    API_KEYS_ENV: "API key file of `attestor-arango api` / `mcp --transport http` (an "
    "entry's optional `expires_at`, ISO-8601 with a zone, ends the key then: 401; see "
    "*API key limits* below)",
    "ATTESTOR_BLAS_THREADS": "BLAS threads the CLI and servers set (`1`; `0` leaves BLAS alone)",
}

KEY_LIMITS = f"""
### API key limits

A key's `max_writes_per_agent` counts each agent's writes across requests (in the
server's memory, per key, whatever session or namespace the headers name). A key with
such a limit acts as at most `max_agents` distinct agent ids (default {DEFAULT_MAX_AGENTS})
while the server runs: a wildcard key (`agent_ids: ["*"]`) could otherwise name a fresh
agent, with a fresh counter, for every write. The next new agent id is answered 429
`quota_exceeded` (known agents keep working up to their own limit), so such a key writes
at most `max_agents × max_writes_per_agent` times and the server holds at most
`max_agents` counters per key; a key removed from the key file drops its counters. A key
without `max_writes_per_agent` keeps no counters and names any agent its `agent_ids`
allow. The tenant's daily quota (`governance quota`) caps all keys of a tenant together.
"""

HEAD = f"""# Configuration

<!-- generated by `python -m attestor_arango.interfaces.cli.config_docs`; edit that module -->

Settings come from, later winning: the environment, then one YAML file, then arguments
in code (`load_config(..., key=value)`, or CLI flags such as `--path`). Nothing needs to
be configured: the defaults below give an embedded store in your data directory.

The YAML file is the first of:

1. `--config FILE` (accepted before or after the CLI subcommand);
2. `$ATTESTOR_CONFIG`;
3. the platform config file, when it exists:
   `$XDG_CONFIG_HOME/attestor-arango/{CONFIG_FILENAME}` (default `~/.config/...`) on Linux,
   `~/Library/Application Support/attestor-arango/{CONFIG_FILENAME}` on macOS,
   `%APPDATA%\\attestor-arango\\{CONFIG_FILENAME}` on Windows.

An unknown or invalid key is refused with a message that names the key and the valid
ones. Example:

```yaml
path: ~/agents/memory.db
embedder: local
trace: {{enabled: true}}
retention:
  - {{name: scratch, category: scratch, older_than: 7d, action: delete}}
```

## Keys
"""

ABLATION_TABLE = """\
| switched off | KU add | KU ingest_round | LoCoMo turn R@1 | turn R@10 | session R@5 | MRR |
|---|---|---|---|---|---|---|
| nothing (defaults) | 124/128 | 121/128 | .493 | .857 | .948 | .616 |
| MMR rerank (removed) | 124 | 122 | .493 | .853 | .952 | .619 |
| `decay_enabled` | 123 | 120 | .498 | .857 | .944 | .621 |
| `boost_enabled` | 120 | 117 | .493 | .857 | .948 | .619 |
| `freshness_enabled` | 108 | 97 | .493 | .857 | .948 | .616 |
| `coverage_enabled` | 124 | 123 | .433 | .836 | .944 | .584 |
| `graph_enabled` | 124 | 122 | .420 | .849 | .948 | .564 |
| `relations_enabled` | 124 | 121 | .493 | .857 | .948 | .616 |
| `neighbour_weight: 0` | 124 | 121 | .519 | .853 | .935 | .631 |
| `time_cue_enabled` | 124 | 121 | .455 | .857 | .944 | .595 |
| `lane_completion` | 124 | 121 | .455 | .844 | .961 | .587 |
| `bm25_rescore` | 124 | 121 | .493 | .853 | .939 | .614 |"""

# what each optional step earned when it was last measured (issue 17, session 8)
RANKING = """
Which optional steps earn their place (`benchmarks/ablate_ranking.py`, issue 17 session 8,
code 3550887; `benchmarks/results/ablation-issue17-s8.json`): each row switches one step
off, the rest at the defaults. KU = new statement ranked first, knowledge-update suite,
test split (128 cases), through `add` and `ingest_round`; LoCoMo = dev conversations 26
and 30 (231 questions) through `add_turns`. MiniLM; machine load 9-20 on 2 shared cores.

{table}

A step stays when switching it off costs on at least one of the two and gains no more
than a case on the other. The MMR rerank (`mmr_enabled`, `mmr_lambda`) helped on
neither and was removed. `relations_enabled` changed nothing on either, but LoCoMo's
turn ranking skips synthetic candidates by construction and no KU case asks about a
relation, so neither can show it helping; it is Attestor's "triples inject" step and
was left in for a decision. `speaker_weight` and `asking_weight` landed after this run
and are not in it (`asking_weight`, session 9: LoCoMo dev MiniLM turn R@1/10 .498/.875
with it off, .519/.883 on; no effect on the KU suite, which stores no conversation turns).
Session coverage cost two KU cases through `ingest_round` and helps LoCoMo: it now
counts only conversation records (turns and a round's verbatim record), not the facts
read from a round. `hyde_enabled` and `multi_query_enabled` are
LLM lanes, off by default and not measured here (no LLM in the read path).

The vector lane is APPROXIMATE from `vector_prefilter_rows` (250,000) rows the recall's
view sees: the embedded store then scores exactly only the `vector_prefilter` (5000)
rows nearest the query by the signs of their int8 codes. Below it, at every store of up
to 250k memories, the lane is exact as before; `vector_prefilter: 0` keeps it exact at
every size. On LoCoMo's 303 questions (MiniLM, session 12, benchmarks/prefilter_overlap.py)
the approximate lane kept the exact lane's top 10 at 300k (overlap@10 1.000, @50 .9997)
and at 1M (overlap@10 .9993, @50 .9951), and recall's top 10 kept the same set on 95 of
95 questions at both, for recall p50 33 vs 70-81 ms at 1M (p95 53 vs 101-136 ms,
scale.py probe, load ~2).
"""

RETENTION = f"""
## Retention

`retention:` in the config file (or a YAML/JSON file passed to
`attestor-arango retention --policies FILE`) is a list of policies:

```yaml
- name: scratch-cleanup   # required, unique
  action: delete          # archive (close, history stays replayable) | delete (rows removed)
  namespace: scratch      # optional; omitted = every namespace
  category: note          # optional
  tags: [temp, draft]     # optional; any of these
  older_than: 30d         # required: a number and s, m, h, d or w (transaction-time age)
```

`--dry-run` lists what each policy would change and writes nothing; `delete` writes an
audit entry first, like a purge. With no policies configured the command changes
nothing and says where to put them. A run takes at most {MAX_POLICIES} policies (each is
a pass over the tenant's rows); more is refused, naming the limit.
"""

EPISODES = f"""
## Re-reading episodes

`consolidate(limit=...)` (1 to 10,000 episodes, default 50) and `reflect()` (the 500
newest) re-read the newest episodes' texts on every call: consolidate the user's and
the assistant's, reflect the user's. One call re-reads at most {EPISODE_TEXT_BUDGET:,}
characters of them (`EPISODE_TEXT_BUDGET` in `ingest/consolidation.py`; rule extraction
takes about 9 s for 1,000,000): the newest episodes are taken until the next would pass
it, the newest always. consolidate then adds a warning (`older episodes left out: ...`)
to its report; reflect's `episodes` counts the episodes it read. 500 rounds of 2,000
characters fit; without the bound one reflect over 100 rounds of 64,000 characters took
74 s (500 of them: about 6 minutes).
"""


def _env_of(key: str) -> str:
    names = [name for name, keys in _ENV.items() if ".".join(keys) == key]
    return ", ".join(f"`{n}`" for n in names)


def _default(value: Any) -> str:
    if isinstance(value, SecretStr):
        return '`""`' if not value.get_secret_value() else "(secret)"
    if isinstance(value, BaseModel | dict | list):
        return "" if isinstance(value, BaseModel) else f"`{value!r}`"
    if value is None:
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    return f"`{value}`"


def _rows(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    rows = []
    for name, field in model.model_fields.items():
        key = prefix + name
        text = field.description or DESCRIPTIONS.get(key)
        if not text:
            raise KeyError(f"config key {key!r} has no description; add it to DESCRIPTIONS")
        default = field.get_default(call_default_factory=True)
        rows.append((key, _default(default), _env_of(key), text))
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            rows.extend(_rows(annotation, key + "."))
    return rows


def render() -> str:
    """The whole of docs/configuration.md."""
    lines = [HEAD, "| key | default | environment | meaning |", "|---|---|---|---|"]
    lines += [f"| `{k}` | {d} | {e} | {t} |" for k, d, e, t in _rows(Config)]
    lines += ["", "Other environment variables:", "", "| variable | meaning |", "|---|---|"]
    lines += [f"| `{name}` | {text} |" for name, text in OTHER_ENV.items()]
    lines.append(KEY_LIMITS)
    lines += [
        "## Retrieval",
        "",
        "Keys of `retrieval:` (each optional; the default in brackets):",
        "",
    ]
    for field in dataclasses.fields(RetrievalConfig):
        lines.append(f"- `{field.name}` ({field.default!r})")
    lines.append(RANKING.format(table=ABLATION_TABLE))
    lines.append(RETENTION)
    lines.append(EPISODES)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
