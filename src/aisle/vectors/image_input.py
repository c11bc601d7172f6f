"""Validation of uploaded product photos for ``POST /images/search``.

Limits: at most :data:`MAX_IMAGE_BYTES` (8 MiB) of file and :data:`MAX_IMAGE_PIXELS` (40 megapixels,
e.g. 8000 x 5000) of image; JPEG or PNG only (decided by the bytes, not the file name or the declared
content type). Each refusal is a 4xx with its own code:

=====================  ======  ===================================================================
code                   status  when
=====================  ======  ===================================================================
image_empty            400     the file has no bytes
image_invalid          400     the bytes are not an image Pillow can read, or the image is truncated
image_format           415     an image, but neither JPEG nor PNG (GIF, WebP, BMP, TIFF...)
image_too_large        413     more than 8 MiB
image_too_many_pixels  413     more than 40 megapixels declared in the header (a decompression bomb
                               is refused before any pixel is decoded)
=====================  ======  ===================================================================
"""

from __future__ import annotations

import io
import warnings

from aisle.core.errors import AisleError, BadRequest, ErrorCode

MAX_IMAGE_BYTES = 8 * 1024 * 1024
MAX_IMAGE_PIXELS = 40_000_000
FORMATS = ("JPEG", "PNG")


class ImageRejected(AisleError):
    code = ErrorCode.IMAGE_INVALID
    status = 400


def check_size(n_bytes: int) -> None:
    """Raises ImageRejected (413 ``image_too_large``) above :data:`MAX_IMAGE_BYTES`."""
    if n_bytes > MAX_IMAGE_BYTES:
        raise ImageRejected(
            f"the image is {n_bytes} bytes; the limit is {MAX_IMAGE_BYTES} bytes (8 MiB)",
            code=ErrorCode.IMAGE_TOO_LARGE,
            status=413,
        )


def decode_image(data: bytes) -> object:
    """Decode a JPEG or PNG upload into a loaded PIL image, refusing bad input (module docstring)."""
    from PIL import Image, UnidentifiedImageError

    if not data:
        raise BadRequest("the uploaded file is empty", code=ErrorCode.IMAGE_EMPTY)
    check_size(len(data))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))
            width, height = image.size
            if image.format not in FORMATS:
                raise ImageRejected(
                    f"the image is {image.format}; only JPEG and PNG are accepted",
                    code=ErrorCode.IMAGE_FORMAT,
                    status=415,
                )
            if width * height > MAX_IMAGE_PIXELS:
                raise ImageRejected(
                    f"the image is {width} x {height} pixels; the limit is {MAX_IMAGE_PIXELS} pixels",
                    code=ErrorCode.IMAGE_TOO_MANY_PIXELS,
                    status=413,
                )
            image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageRejected(str(exc), code=ErrorCode.IMAGE_TOO_MANY_PIXELS, status=413) from exc
    except UnidentifiedImageError as exc:
        raise ImageRejected("the uploaded file is not an image (JPEG or PNG expected)") from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageRejected(f"the image cannot be decoded: {exc}") from exc
    return image
