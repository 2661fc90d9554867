"""The Mondrian-process engine shared by every model of the library.

- :mod:`.tree`: storage (``TreeArrays``, ``TreeState``, ``SampleStore``);
- :mod:`.storage`: how node storage grows, and the loops that grow it;
- :mod:`.reserved`: node arrays in reserved memory, grown without copies;
- :mod:`.layout`: node order in memory (depth-first renumbering);
- :mod:`.boxes`: a point against a tree: its path, leaf and the boxes that hold it;
- :mod:`.random`: per-tree random streams usable inside compiled code;
- :mod:`.growth`: batch sampling of blocks on data (with pausing), one-point roots;
- :mod:`.extension`: online extension with new points, un-pausing of leaves;
- :mod:`.paths`: leaves, depths and branch-off probabilities of test points.

Models (Mondrian forests, AMF, the Mondrian kernel) keep their own per-node
statistics beside the tree and call these kernels from their own compiled loops.
"""
