"""placeholder"""
KERNELS = ()
