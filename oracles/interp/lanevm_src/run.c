/* lanevm_run: being written this session (vm.h has the contract). */
#include "vm.h"

PyObject *
lanevm_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    PyErr_SetString(PyExc_NotImplementedError, "lanevm.run is not written yet");
    return NULL;
}
