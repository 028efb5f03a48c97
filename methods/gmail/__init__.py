"""GMAIL — Generative Modality Alignment for generated Image Learning (spec gmail.md).

Generated images are a modality of their own: a LoRA-tuned copy f_g of the frozen real-image
encoder f_r (own "Projection for Gen") is aligned to f_r with L_align (InfoNCE, generated anchors,
frozen real targets, τ = 0.07), then downstream models train on generated images through f_g while
real images keep going through f_r. Modules: ``data`` (real/generated pairs), ``lora``, ``model``
(f_g and the inference router), ``losses``, ``train`` (stage 1 and 2), ``evaluate``, ``caption``,
``experiment``, ``report``, ``jobs``.
"""
