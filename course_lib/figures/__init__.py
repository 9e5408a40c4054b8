"""Figures drawn by code: attention heatmaps (:mod:`~course_lib.figures.plot`), schematic diagrams
(:mod:`~course_lib.figures.diagrams`) and the CJK font that draws Chinese labels (:mod:`~course_lib.figures.fonts`).

Notebooks reach them as ``cl.plot_attention``, ``cl.qkv_diagram`` and so on. matplotlib is imported
inside the functions that draw, so importing these modules costs only torch.
"""
