"""attention-workshop: self-attention built from nothing, then found inside a real transformer.

The core is two small modules with no I/O: `embeddings` (the toy table) and
`attention` (softmax, scaled dot-product attention and the two toy heads).
"""

__version__ = "0.1.0"
