"""Library-call answers to notebook 10's implement-it exercises: each must score zero (tools/exercise_check.py,
tests/test_grading.py). Keys are the exercises' labels; values replace the whole answer cell."""

SHORTCUTS = {
    "Exercise 2": """def my_unpatchify(patches, P, H, W):
    return cl.unpatchify(patches, P, H, W)""",
    "Exercise 3": """def vit_parameter_count(image_size, patch_size, channels, d_model, depth, mlp_ratio, num_classes):
    model = cl.TinyViT(image_size=image_size, patch_size=patch_size, in_channels=channels, d_model=d_model,
                       depth=depth, num_heads=1, mlp_ratio=mlp_ratio, num_classes=num_classes)
    return sum(p.numel() for p in model.parameters())""",
}

# Exercises that write a function no library call replaces, and why.
NO_SHORTCUT = {
    "Exercise 4": "no library function reads the class token's row out of attention weights; it is indexing, a mean "
    "over the heads and a division",
    "Exercise 5": "no library function permutes an image's patches; cl.patchify and cl.unpatchify, which the exercise "
    "asks for, are its building blocks, and the permutation is one indexing",
}

# The same library work reached by other doors (operators, functions imported under other names): the
# nbgrader test's shortcut student hands these in where they exist; each must score zero too.
ALIASES = {
    "Exercise 2": """def my_unpatchify(patches, P, H, W):
    from course_lib.vision import unpatchify as reassemble
    return reassemble(patches, P, H, W)""",
    # PyTorch's own encoder layer counts the blocks (it passed the check until 2026-11-28)
    "Exercise 3": """def vit_parameter_count(image_size, patch_size, channels, d_model, depth, mlp_ratio, num_classes):
    from torch import nn

    def count(m):
        return sum(p.numel() for p in m.parameters())

    D, r = d_model, mlp_ratio
    return (count(cl.PatchEmbedding(in_channels=channels, patch_size=patch_size, d_model=D)) + D
            + (1 + (image_size // patch_size) ** 2) * D + depth * count(nn.TransformerEncoderLayer(D, 1, r * D))
            + count(nn.LayerNorm(D)) + count(nn.Linear(D, num_classes)))""",
}
