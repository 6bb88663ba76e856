/*
 * The engine's per-command hot path in C, an optional accelerator of two pure functions:
 * column_moves for rules.legal_moves and visible_columns for view.redact.
 *
 * The server lists a player's legal moves after every accepted command; in Python most of that
 * time is the per-column scan (run lengths, which run card fits on which column top). This file
 * lists, in the pure listing's order and from the same tables, the moves up to and including the
 * column-to-column ones (RULES.md sections 2, 3 and 5):
 *
 *   waste to foundation, columns to foundation (1..N), waste to columns, column to column (by source,
 *   then target, then count; into an empty column A-B, then A-BxK for K = 2..).
 *
 * rules.legal_moves adds the rest (foundation to columns, draw, redeal, finish) in Python, and
 * computes the move limits with rules.move_limit (the one definition; passed in here). The run
 * length is a copy of rules.run_length (a run: face-up top cards each of which fits on the card
 * beneath it). Every listed move is an item of `table`, built once per column count by the
 * Python side (the same LegalMove values the pure listing builds), so this file creates no
 * command. tests/engine/test_fast_path.py checks both listings give the same list on random
 * positions of every preset.
 *
 * Anything outside what this file handles (not a tuple, a card code outside 0..51, more than 63
 * columns, a run longer than 13 cards) answers None, and the caller lists the moves in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define CARDS 52
#define MAXCOLS 63
#define MAXRUN 13
#define MAXCOLCARDS 256

/* The table's layout (rules._c_table builds it for n columns):
 *   0                         waste to foundation
 *   1 + i                     column i to foundation
 *   1 + n + j                 waste to column j
 *   1 + 2n + (i*n + j)*13 + k-1        column i to column j, k cards, no count written
 *   1 + 2n + 13n^2 + (i*n + j)*13 + c-1 column i to empty column j with count c (c >= 2)
 */

static int card_at(PyObject *column, Py_ssize_t index, int *card) {
    PyObject *item = PyTuple_GET_ITEM(column, index);
    if (!PyLong_CheckExact(item)) return 0;
    long value = PyLong_AsLong(item);
    if (value < 0 || value >= CARDS) {
        PyErr_Clear();
        return 0;
    }
    *card = (int)value;
    return 1;
}

static int append(PyObject *result, PyObject *table, Py_ssize_t index) {
    PyObject *item = PyList_GET_ITEM(table, index);
    if (item == Py_None) {
        PyErr_SetString(PyExc_ValueError, "the move table has no entry for a listed move");
        return -1;
    }
    return PyList_Append(result, item);
}

/* column_moves(tableau, hidden, foundations, waste, fits, onto_limit, into_limit, table) -> list | None
 *
 * fits: bytes of 52*52, fits[onto*52 + card] != 0 when card may be placed on onto (variant.builds_on).
 * onto_limit, into_limit: rules.move_limit onto a card and into an empty column (the position's empty
 * columns; into_limit unused without one).
 */
static PyObject *column_moves(PyObject *self, PyObject *args) {
    PyObject *tableau, *hidden, *foundations, *waste, *fits_obj, *table;
    long long onto_limit, into_limit;
    if (!PyArg_ParseTuple(args, "O!O!O!O!SLLO!", &PyTuple_Type, &tableau, &PyTuple_Type, &hidden, &PyTuple_Type,
                          &foundations, &PyTuple_Type, &waste, &fits_obj, &onto_limit, &into_limit, &PyList_Type,
                          &table))
        return NULL;
    if (PyBytes_GET_SIZE(fits_obj) != CARDS * CARDS) {
        PyErr_SetString(PyExc_ValueError, "fits must be 52*52 bytes");
        return NULL;
    }
    const unsigned char *fits = (const unsigned char *)PyBytes_AS_STRING(fits_obj);
    Py_ssize_t n = PyTuple_GET_SIZE(tableau);
    if (n > MAXCOLS || PyTuple_GET_SIZE(hidden) != n || PyList_GET_SIZE(table) != 1 + 2 * n + 2 * MAXRUN * n * n)
        Py_RETURN_NONE;

    int tops[MAXCOLS], down[MAXCOLS];
    Py_ssize_t lens[MAXCOLS];
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        PyObject *h = PyTuple_GET_ITEM(hidden, j);
        if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(h)) Py_RETURN_NONE;
        lens[j] = PyTuple_GET_SIZE(column);
        long value = PyLong_AsLong(h);
        if (value < 0 || value > lens[j] || lens[j] > MAXCOLCARDS) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        down[j] = (int)value;
        tops[j] = -1;
        if (lens[j] && !card_at(column, lens[j] - 1, &tops[j])) Py_RETURN_NONE;
    }
    /* The cards a foundation slot takes now (rules._wanted): the next card of each slot short of a
     * king, and the aces when a slot is empty. */
    unsigned char wanted[CARDS] = {0};
    for (Py_ssize_t s = 0; s < PyTuple_GET_SIZE(foundations); s++) {
        PyObject *item = PyTuple_GET_ITEM(foundations, s);
        if (!PyLong_CheckExact(item)) Py_RETURN_NONE;
        long top = PyLong_AsLong(item);
        if (top == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        if (top == -1) {
            wanted[0] = wanted[13] = wanted[26] = wanted[39] = 1;
        } else if (top < 0 || top >= CARDS) {
            Py_RETURN_NONE;
        } else if (top % 13 != 12) {
            wanted[top + 1] = 1;
        }
    }
    int waste_top = -1;
    Py_ssize_t waste_len = PyTuple_GET_SIZE(waste);
    if (waste_len && !card_at(waste, waste_len - 1, &waste_top)) Py_RETURN_NONE;

    const Py_ssize_t to_foundation = 1, waste_to_column = 1 + n, onto = 1 + 2 * n;
    const Py_ssize_t with_count = onto + MAXRUN * n * n;
    PyObject *result = PyList_New(0);
    if (result == NULL) return NULL;
    if (waste_top >= 0 && wanted[waste_top] && append(result, table, 0) < 0) goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        if (tops[i] >= 0 && wanted[tops[i]] && append(result, table, to_foundation + i) < 0) goto fail;
    if (waste_top >= 0)
        for (Py_ssize_t j = 0; j < n; j++)
            if ((tops[j] < 0 || fits[tops[j] * CARDS + waste_top]) && append(result, table, waste_to_column + j) < 0)
                goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!lens[i]) continue;
        PyObject *column = PyTuple_GET_ITEM(tableau, i);
        /* The run on column i: a copy of rules.run_length. */
        int run_cards[MAXRUN];
        Py_ssize_t run = 1, at = lens[i] - 1;
        run_cards[0] = tops[i];
        while (at > down[i]) {
            int below;
            if (!card_at(column, at - 1, &below)) goto unsupported;
            if (!fits[below * CARDS + run_cards[run - 1]]) break;
            if (run == MAXRUN) goto unsupported;
            run_cards[run++] = below;
            at--;
        }
        long long onto_max = run < onto_limit ? run : onto_limit;
        long long into_max = run < into_limit ? run : into_limit;
        for (Py_ssize_t j = 0; j < n; j++) {
            if (j == i) continue;
            Py_ssize_t pair = (i * n + j) * MAXRUN;
            if (tops[j] < 0) {
                if (append(result, table, onto + pair) < 0) goto fail; /* A-B: one card */
                for (long long c = 2; c <= into_max; c++)
                    if (append(result, table, with_count + pair + c - 1) < 0) goto fail;
                continue;
            }
            for (long long k = 1; k <= onto_max; k++)
                if (fits[tops[j] * CARDS + run_cards[k - 1]] && append(result, table, onto + pair + k - 1) < 0)
                    goto fail;
        }
    }
    return result;
unsupported:
    Py_DECREF(result);
    Py_RETURN_NONE;
fail:
    Py_DECREF(result);
    return NULL;
}

/* visible_columns(tableau, hidden) -> tuple | None
 *
 * view.redact's tableau: each column from its first face-up card on (column[hidden:]), the column
 * itself when nothing of it is face down. None for anything but a tuple of tuples and as many counts
 * in 0..len(column).
 */
static PyObject *visible_columns(PyObject *self, PyObject *args) {
    PyObject *tableau, *hidden;
    if (!PyArg_ParseTuple(args, "O!O!", &PyTuple_Type, &tableau, &PyTuple_Type, &hidden)) return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(tableau);
    if (PyTuple_GET_SIZE(hidden) != n) Py_RETURN_NONE;
    PyObject *result = PyTuple_New(n);
    if (result == NULL) return NULL;
    for (Py_ssize_t j = 0; j < n; j++) {
        PyObject *column = PyTuple_GET_ITEM(tableau, j);
        PyObject *h = PyTuple_GET_ITEM(hidden, j);
        if (!PyTuple_CheckExact(column) || !PyLong_CheckExact(h)) goto unsupported;
        Py_ssize_t len = PyTuple_GET_SIZE(column);
        long down = PyLong_AsLong(h);
        if (down < 0 || down > len) {
            PyErr_Clear();
            goto unsupported;
        }
        PyObject *up = PyTuple_GetSlice(column, down, len); /* the column itself when down is 0 */
        if (up == NULL) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, j, up);
    }
    return result;
unsupported:
    Py_DECREF(result);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"column_moves", column_moves, METH_VARARGS,
     "column_moves(tableau, hidden, foundations, waste, fits, onto_limit, into_limit, table) -> list | None\n\n"
     "The legal moves up to the column-to-column ones, in rules.legal_moves' order (items of table); None when "
     "the position is outside what the C listing handles."},
    {"visible_columns", visible_columns, METH_VARARGS,
     "visible_columns(tableau, hidden) -> tuple | None\n\n"
     "Each column's face-up cards (column[hidden:]), as view.redact lists them; None for a malformed tableau."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_cengine",
                                    "The engine's optional C hot path (rules.legal_moves, view.redact).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__cengine(void) { return PyModule_Create(&module); }
