/* lanevm_compile: being written this session (vm.h has the contract). */
#include "vm.h"

PyObject *
lanevm_compile(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyErr_SetString(PyExc_NotImplementedError, "lanevm.compile is not written yet");
    return NULL;
}
