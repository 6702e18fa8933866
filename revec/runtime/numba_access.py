"""Column access for the generated numba kernels, as small numba intrinsics.

A kernel touches its SoA columns in many places; written as plain numba (array locals
``cols[k].view(np.int16)``, ``c[np.uint64(i)]``, ``accs[0:8].view(np.int64)[0]``) every
access went through numba's generic typing and lowering (the index cast's and the
subscript's call-type resolutions, the view's dtype checks and their exception paths,
the slices) and every array local through reference counting at each assignment, loop
exit and return; together that was most of a kernel's IR and of its compile time.
These intrinsics type in one step and lower to the few LLVM instructions an access
needs; the machine code of a column load or store is the same (a ``getelementptr`` and
a load or store of the element, no negative-index fix-up: the kernels' indices into
their columns are never negative).

* ``column_ptr(cols, k, dtype)``: the data of byte column ``cols[k]`` (a typed list of
  ``uint8[::1]``) as a pointer to ``dtype``, borrowed: no reference count, no checks;
* ``ld(a, i)`` / ``st(a, i, v)``: ``a[i]`` and ``a[i] = v`` (``v`` converted to the
  element type as numba's ``setitem`` does) for a column pointer or a 1-D contiguous
  array, ``i`` any integer taken as non-negative;
* ``ld_at(raw, off, dtype)`` / ``st_at(raw, off, dtype, v)``: a ``dtype`` value at byte
  ``off`` of a byte array (the reducers' slots);
* ``zero32(m, j)``: ``m[j:j + 32] = 0`` for bytes (one vector store);
* ``ptr_add(p, i)``: column pointer ``p`` advanced by ``i`` elements (``p + i``);
* ``copy_n(dst, src, n)``: ``n`` elements from one column pointer to another (memcpy);
* ``column_size(cols, k)``: ``cols[k].size``, borrowed (the driver's per-block checks);
* ``as_column(raw, dtype)``: a byte array viewed as a 1-D contiguous array of ``dtype``
  (``raw.size // itemsize`` elements, no checks).
"""

from __future__ import annotations

from typing import Any

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic
from numba.np.arrayobj import load_item, make_array, store_item


def _column(a: Any) -> bool:
    """A 1-D contiguous array or a column pointer (:func:`column_ptr`)."""
    return isinstance(a, types.CPointer) or (
        isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C")


def array_field(context: Any, builder: ir.IRBuilder, arrty: Any, arr: Any,
                 name: str) -> Any:
    """One field (``data``, ``nitems``) of an array value, by one ``extractvalue``.
    ``make_array(...)(context, builder, arr).data`` gives the same value through a
    struct proxy: an alloca, a store of the whole struct and a load, which cost numba's
    Python about 1.4 ms per access while compiling a kernel (cProfile, 12 generated
    kernels, 2-core AMD EPYC, 2026-11-27)."""
    pos = context.data_model_manager[arrty].get_field_position(name)
    return builder.extract_value(arr, pos)


def _ptr(context: Any, builder: ir.IRBuilder, arrty: Any, arr: Any, idxty: Any,
         idx: Any) -> Any:
    i = context.cast(builder, idx, idxty, types.uintp)
    if isinstance(arrty, types.CPointer):
        data = builder.bitcast(arr, context.get_data_type(arrty.dtype).as_pointer())
    else:
        data = array_field(context, builder, arrty, arr, "data")
    return builder.gep(data, [i])


@intrinsic
def ld(typingctx: Any, a: Any, i: Any) -> Any:
    """``a[i]`` (``i >= 0``)."""
    if not (_column(a) and isinstance(i, types.Integer)):
        return None
    sig = a.dtype(a, i)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        arrty = sig.args[0]
        ptr = _ptr(context, builder, arrty, args[0], sig.args[1], args[1])
        if isinstance(arrty, types.CPointer):
            return context.unpack_value(builder, arrty.dtype, ptr)
        return load_item(context, builder, arrty, ptr)

    return sig, codegen


@intrinsic
def st(typingctx: Any, a: Any, i: Any, v: Any) -> Any:
    """``a[i] = v`` (``i >= 0``)."""
    if not (_column(a) and isinstance(i, types.Integer)
            and isinstance(v, types.Number | types.Boolean)):
        return None
    sig = types.none(a, i, v)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        arrty = sig.args[0]
        ptr = _ptr(context, builder, arrty, args[0], sig.args[1], args[1])
        val = context.cast(builder, args[2], sig.args[2], arrty.dtype)
        if isinstance(arrty, types.CPointer):
            context.pack_value(builder, arrty.dtype, val, ptr)
        else:
            store_item(context, builder, arrty, val, ptr)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def as_column(typingctx: Any, raw: Any, dtype: Any) -> Any:
    """``raw`` (bytes) as a column of ``dtype`` (a NumPy scalar type such as ``np.int16``)."""
    if not (isinstance(raw, types.Array) and _column(raw) and raw.dtype == types.uint8):
        return None
    elem = _scalar_type(dtype)
    if elem is None:
        return None
    out = types.Array(elem, 1, "C")
    sig = out(raw, dtype)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        src = make_array(sig.args[0])(context, builder, args[0])
        dst = make_array(sig.return_type)(context, builder)
        size = context.get_abi_sizeof(context.get_data_type(elem))
        intp = context.get_value_type(types.intp)
        n = builder.udiv(builder.extract_value(src.shape, 0), ir.Constant(intp, size))
        dst.meminfo = src.meminfo
        dst.parent = src.parent
        dst.nitems = n
        dst.itemsize = ir.Constant(intp, size)
        dst.data = builder.bitcast(src.data, dst.data.type)
        dst.shape = cgutils.pack_array(builder, [n])
        dst.strides = cgutils.pack_array(builder, [ir.Constant(intp, size)])
        res = dst._getvalue()
        # the view shares the byte column's buffer: a new reference to it
        context.nrt.incref(builder, sig.return_type, res)
        return res

    return sig, codegen


def _scalar_type(dtype: Any) -> Any:
    if isinstance(dtype, types.NumberClass):
        return dtype.instance_type
    if isinstance(dtype, types.DType):
        return dtype.dtype
    return None


def _byte_ptr(context: Any, builder: ir.IRBuilder, rawty: Any, raw: Any, offty: Any,
              off: Any, elem: Any) -> Any:
    ptr = _ptr(context, builder, rawty, raw, offty, off)
    return builder.bitcast(ptr, context.get_data_type(elem).as_pointer())


@intrinsic
def ld_at(typingctx: Any, raw: Any, off: Any, dtype: Any) -> Any:
    """The ``dtype`` value at byte ``off`` of byte array ``raw`` (a reducer's slot)."""
    elem = _scalar_type(dtype)
    if not (isinstance(raw, types.Array) and _column(raw) and raw.dtype == types.uint8
            and isinstance(off, types.Integer) and elem is not None):
        return None
    sig = elem(raw, off, dtype)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        p = _byte_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], elem)
        return context.unpack_value(builder, elem, p, align=1)

    return sig, codegen


@intrinsic
def st_at(typingctx: Any, raw: Any, off: Any, dtype: Any, v: Any) -> Any:
    """Store ``v`` as ``dtype`` at byte ``off`` of byte array ``raw``."""
    elem = _scalar_type(dtype)
    if not (isinstance(raw, types.Array) and _column(raw) and raw.dtype == types.uint8
            and isinstance(off, types.Integer) and elem is not None
            and isinstance(v, types.Number | types.Boolean)):
        return None
    sig = types.none(raw, off, dtype, v)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        p = _byte_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1], elem)
        val = context.cast(builder, args[3], sig.args[3], elem)
        context.pack_value(builder, elem, val, p, align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def zero32(typingctx: Any, m: Any, j: Any) -> Any:
    """``m[j:j + 32] = 0`` for a byte array ``m`` (one vector store)."""
    if not (_column(m) and m.dtype in (types.uint8, types.int8, types.boolean)
            and isinstance(j, types.Integer)):
        return None
    sig = types.none(m, j)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        vty = ir.VectorType(ir.IntType(8), 32)
        p = _byte_ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1],
                      types.uint8)
        builder.store(ir.Constant(vty, None), builder.bitcast(p, vty.as_pointer()), align=1)
        return context.get_dummy_value()

    return sig, codegen


def _list_field(context: Any, builder: ir.IRBuilder, listty: Any, lst: Any, kty: Any,
                k: Any, name: str) -> Any:
    """One field (``data``, ``nitems``) of item ``k`` of a typed list of arrays,
    borrowed (no reference taken, no checks): one load from the item's slot.  Loading
    the whole array struct through numba's data model and a struct proxy gave the same
    value for about 2.5 ms of numba's Python per access while compiling a kernel
    (cProfile, 12 generated kernels, 2-core AMD EPYC, 2026-11-27)."""
    from numba.typed.typedobjectutils import _container_get_data

    fnty = ir.FunctionType(cgutils.voidptr_t, [cgutils.voidptr_t])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_list_base_ptr")
    fn.attributes.add("alwaysinline")
    fn.attributes.add("nounwind")
    fn.attributes.add("readonly")
    base = builder.call(fn, [_container_get_data(context, builder, listty, lst)])
    arrty = listty.item_type
    i = context.cast(builder, k, kty, types.intp)
    item_ptr = builder.gep(builder.bitcast(base, context.get_data_type(arrty).as_pointer()),
                           [i])
    pos = context.data_model_manager[arrty].get_field_position(name)
    return builder.load(builder.gep(item_ptr, [ir.Constant(ir.IntType(32), 0),
                                               ir.Constant(ir.IntType(32), pos)]))


def _list_of_columns(lst: Any) -> bool:
    return (isinstance(lst, types.ListType) and isinstance(lst.item_type, types.Array)
            and lst.item_type.ndim == 1 and lst.item_type.layout == "C")


@intrinsic
def column_ptr(typingctx: Any, cols: Any, k: Any, dtype: Any) -> Any:
    """The data of column ``cols[k]`` (a typed list of byte columns) as a pointer to
    ``dtype``: no reference counting, no checks.  The list keeps the column alive; a
    kernel takes the pointer again after anything that may replace the column
    (``ensure_bytes``, ``grow_children``)."""
    elem = _scalar_type(dtype)
    if not (_list_of_columns(cols) and isinstance(k, types.Integer) and elem is not None):
        return None
    sig = types.CPointer(elem)(cols, k, dtype)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        data = _list_field(context, builder, sig.args[0], args[0], sig.args[1], args[1],
                           "data")
        return builder.bitcast(data, context.get_value_type(sig.return_type))

    return sig, codegen


@intrinsic
def column_size(typingctx: Any, cols: Any, k: Any) -> Any:
    """The element count of column ``cols[k]`` (a typed list of 1-D arrays), borrowed:
    no reference counting, no checks.  ``cols[k].size`` in plain numba calls out of line
    into the typed list and takes and drops a reference (two atomic operations); the
    driver asks this for every column of every block."""
    if not (_list_of_columns(cols) and isinstance(k, types.Integer)):
        return None
    sig = types.intp(cols, k)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return _list_field(context, builder, sig.args[0], args[0], sig.args[1], args[1],
                           "nitems")

    return sig, codegen


@intrinsic
def ptr_add(typingctx: Any, p: Any, i: Any) -> Any:
    """The column pointer ``p`` advanced by ``i`` elements (``p + i`` in C, ``i >= 0``):
    a view of a column from element ``i`` on, as the C kernels' ``p_<col> + off``
    (uniform_base: a block's columns read in place through the same names as the split's
    copies)."""
    if not (isinstance(p, types.CPointer) and isinstance(i, types.Integer)):
        return None
    sig = p(p, i)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        return _ptr(context, builder, sig.args[0], args[0], sig.args[1], args[1])

    return sig, codegen


@intrinsic
def copy_n(typingctx: Any, dst: Any, src: Any, n: Any) -> Any:
    """``dst[0:n] = src[0:n]`` for two column pointers of one element type that do not
    overlap (one ``memcpy``)."""
    if not (isinstance(dst, types.CPointer) and isinstance(src, types.CPointer)
            and dst.dtype == src.dtype and isinstance(n, types.Integer)):
        return None
    sig = types.none(dst, src, n)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        elem = context.get_data_type(sig.args[0].dtype)
        size = context.get_abi_sizeof(elem)
        cnt = context.cast(builder, args[2], sig.args[2], types.intp)
        d = builder.bitcast(args[0], cgutils.voidptr_t)
        s = builder.bitcast(args[1], cgutils.voidptr_t)
        cgutils.raw_memcpy(builder, d, s, cnt, size)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def lane_buf(typingctx: Any, dtype: Any) -> Any:
    """A 32-element array of ``dtype`` on the kernel's stack (an ``alloca`` in the entry
    block), as a column pointer: the lane arrays of a fused lane loop.  LLVM knows a
    stack array aliases no column, so a loop storing several of them still vectorizes
    (through column scratch it cannot tell the stores apart from the loads)."""
    elem = _scalar_type(dtype)
    if elem is None:
        return None
    sig = types.CPointer(elem)(dtype)

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        lty = context.get_data_type(elem)
        arr = cgutils.alloca_once(builder, ir.ArrayType(lty, 32))
        # on a cache line: the stack pointer's offset in a line differs from process to
        # process (ASLR), and at 16 bytes past a 32-byte boundary every 256-bit access
        # of the lane loop and the step after it split two lines (numba graphcol AVX2:
        # 0.056 vs 0.080 s by the offset alone); LLVM realigns the kernel's frame
        arr.align = 64
        return builder.bitcast(arr, lty.as_pointer())

    return sig, codegen
