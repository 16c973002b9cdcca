"""Model training: the tiny base model and its tokenizer, LoRA / QLoRA SFT with
resume, merge and export. Modules import torch / transformers inside their
functions or at their own top, never here, so that importing the package is cheap."""
