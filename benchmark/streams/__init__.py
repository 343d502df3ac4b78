"""ProactiveStream's decision streams (ProactMem §4, appendix A).

``records`` and ``catalogue`` are the interface labelers and methods share; ``build`` turns an
entity's stored events (and, for desktop, its compiled frames) into decision points, one
module per scope. This package file imports nothing, so importing the interface never pulls in
a builder.
"""
