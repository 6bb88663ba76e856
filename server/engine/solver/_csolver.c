/*
 * The solver's hot loop in C: an optional accelerator of search._search.
 *
 * One best-first stage, node for node the pure search of search.py: the same
 * moves in the same order (search._Expander.moves), auto-play of safe cards in
 * the engine's order (state.autoplay, RULES.md section 5), the same canonical
 * state identity (state.key: columns up to order, foundation slots up to order
 * within a suit, stock and waste by content), the same score, heap order
 * (priority, then insertion counter FIFO or LIFO), node/state budgets, the
 * lock check of lock.py after draws and the draw-only expansion of a state whose
 * waste top is stuck (lock.waste_top_stuck). Only what is cheaper in C differs: states
 * are packed byte strings in one arena, the transposition table is open
 * addressing on a 64-bit hash with full key comparison (no false merges: an
 * exhausted search stays a proof), and the path is kept as parent links.
 *
 * Supported (the Python side checks, this file checks again and raises
 * ValueError): 2 decks (8 slots), build in suit, no face-down cards, no
 * foundation-to-column moves, 1..16 columns of at most 19 cards (a column only
 * grows by a run of at most 13 cards, so 32 bytes per column suffice), a talon
 * (stock and waste) of at most 104 cards.
 *
 * Talon encoding: S is the start's waste (bottom to top) followed by its stock
 * (next draw first). Every later waste followed by stock is a subsequence T of
 * S (draws and redeals keep T, a card leaving the waste top removes it), so a
 * state's talon is (T, waste length, redeals left); the key stores T as the
 * leftmost embedding of T in S (a bit mask), a function of T's content, so two
 * talons are equal in the key exactly when stock and waste are equal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <unistd.h>

#define MAXCOLS 16
#define COLCAP 32
#define MAXINIT (COLCAP - 13)
#define TALCAP 104
#define MASKCAP 13
#define MAXMOVES 1024
#define KEYCAP (7 + MASKCAP + MAXCOLS * (COLCAP + 1) + 8)

enum { RULE_SINGLE = 0, RULE_SUPERMOVE = 1, RULE_SEQUENCE = 2 };
enum { M_NONE = 0, M_W2F, M_C2F, M_C2C, M_C2E, M_W2C, M_DRAW, M_REDEAL };
/* Bits of the locks argument: the lock check after draws (the pure search's rule), after every command
 * (measured only: README), the draw-only expansion of a state whose waste top is stuck, and dominance pruning
 * (dominance.dominated: a new state skipped when taking one buried inert card up gives a seen state), and the
 * draw-only expansion of a state whose next stock card is inert (its draw child dominates it: dominance.py). */
enum { LOCKS_DRAWS = 1, LOCKS_ALL = 2, LOCKS_STUCK = 4, LOCKS_DOMINANCE = 8, LOCKS_INERT = 16 };
enum { R_SOLVED = 0, R_EXHAUSTED, R_NODES, R_TIME, R_STATES, R_MEMORY, R_CAPACITY, R_INTERRUPTED };
#define FIND_TIME (-2) /* table_find: doubling the table would outlast the time cap */

typedef struct {
    uint8_t found[8]; /* slot heights, suit s owns 2s and 2s+1, kept sorted */
    uint8_t tlen, wlen, redeals, dirty;
    uint8_t mask[MASKCAP + 1];
    uint8_t tal[TALCAP]; /* T: waste bottom to top, then stock next-draw first */
    uint8_t len[MAXCOLS];
    uint8_t col[MAXCOLS][COLCAP];
} St;

typedef struct {
    uint8_t kind, from, to, count;
} Move;

typedef struct {
    uint64_t key;
    uint32_t rec;
} HeapItem;

typedef struct {
    uint32_t rec, frag;
} Slot;

typedef struct {
    /* configuration */
    int ncols, rule, L, ml;
    uint8_t S[TALCAP];
    int a, b, c, w;
    int lifo, incomplete, locks, autoplay_on;
    long long max_nodes, max_states;
    double seconds; /* < 0: no cap */
    double deadline; /* CLOCK_MONOTONIC seconds when the time cap ends; 0: no cap */
    double grow_s;   /* seconds the table's last doubling took */
    /* results */
    int outcome;
    long long nodes, states, dominated, draw_only;
    /* storage */
    uint8_t *arena;
    size_t used, cap;
    Slot *tab;
    size_t tcap, tcount;
    HeapItem *heap;
    size_t hn, hcap;
    /* solution text: '\0'-separated commands */
    char *text;
    size_t tused, tcap2;
    int nmoves;
    int overflow;
} Search;

/* ---- cards and foundations (state.py accepts/place/is_safe) ---- */

static inline int wanted(const St *s, int c) {
    int r = c % 13, b = (c / 13) * 2;
    return s->found[b] == r || s->found[b + 1] == r;
}

static inline int is_safe_card(const St *s, int c) {
    int needed = c % 13;
    if (needed <= 1)
        return 1;
    return s->found[(c / 13) * 2] >= needed;
}

static inline void place(St *s, int c) {
    int r = c % 13, b = (c / 13) * 2;
    int i = s->found[b] == r ? b : b + 1;
    s->found[i]++;
    if (s->found[b] > s->found[b + 1]) {
        uint8_t t = s->found[b];
        s->found[b] = s->found[b + 1];
        s->found[b + 1] = t;
    }
}

static inline void pop_waste(St *s) {
    memmove(s->tal + s->wlen - 1, s->tal + s->wlen, (size_t)(s->tlen - s->wlen));
    s->tlen--;
    s->wlen--;
    s->dirty = 1;
}

static void compute_mask(const Search *x, St *s) {
    int j = 0;
    memset(s->mask, 0, sizeof s->mask);
    for (int i = 0; i < x->L && j < s->tlen; i++) {
        if (x->S[i] == s->tal[j]) {
            s->mask[i >> 3] |= (uint8_t)(1u << (i & 7));
            j++;
        }
    }
    s->dirty = 0;
}

/* ---- text output ---- */

static int emit(Search *x, const char *t) {
    size_t n = strlen(t) + 1;
    if (x->tused + n > x->tcap2) {
        size_t nc = x->tcap2 ? x->tcap2 * 2 : 4096;
        while (nc < x->tused + n)
            nc *= 2;
        char *p = realloc(x->text, nc);
        if (!p)
            return -1;
        x->text = p;
        x->tcap2 = nc;
    }
    memcpy(x->text + x->tused, t, n);
    x->tused += n;
    x->nmoves++;
    return 0;
}

static void move_text(const Move *m, char *buf) {
    switch (m->kind) {
    case M_W2F: strcpy(buf, "w-f"); break;
    case M_C2F: sprintf(buf, "%d-f", m->from + 1); break;
    case M_C2C: sprintf(buf, "%d-%d", m->from + 1, m->to + 1); break;
    case M_C2E:
        if (m->count == 1)
            sprintf(buf, "%d-%d", m->from + 1, m->to + 1);
        else
            sprintf(buf, "%d-%dx%d", m->from + 1, m->to + 1, m->count);
        break;
    case M_W2C: sprintf(buf, "w-%d", m->to + 1); break;
    case M_DRAW: strcpy(buf, "s"); break;
    case M_REDEAL: strcpy(buf, "r"); break;
    default: buf[0] = 0;
    }
}

/* ---- auto-play (state.autoplay: waste top, then columns 1..N, first safe card, repeat) ---- */

static int autoplay(Search *x, St *s, int record) {
    char buf[16];
    for (;;) {
        if (s->wlen) {
            int c = s->tal[s->wlen - 1];
            if (wanted(s, c) && is_safe_card(s, c)) {
                place(s, c);
                pop_waste(s);
                if (record && emit(x, "w-f") < 0)
                    return -1;
                continue;
            }
        }
        int i;
        for (i = 0; i < x->ncols; i++) {
            int n = s->len[i];
            if (n) {
                int c = s->col[i][n - 1];
                if (wanted(s, c) && is_safe_card(s, c)) {
                    place(s, c);
                    s->len[i]--;
                    if (record) {
                        sprintf(buf, "%d-f", i + 1);
                        if (emit(x, buf) < 0)
                            return -1;
                    }
                    break;
                }
            }
        }
        if (i == x->ncols)
            return 0;
    }
}

/* ---- moves (search._Expander.moves, same order) ---- */

/* The C copy of server.engine.rules.run_length (the one definition of a run, RULES.md section 3), for what
 * this search supports: build in suit (a card one rank lower of the same suit, never an ace on a king) and no
 * face-down cards. tests/engine/test_move_rule.py checks both move the same runs. */
static int run_length(const uint8_t *col, int n) {
    int i = n - 1;
    while (i > 0 && col[i] + 1 == col[i - 1] && col[i - 1] % 13 != 0)
        i--;
    return n - i;
}

static int gen_moves(const Search *x, const St *s, Move *mv) {
    int n = 0, ncols = x->ncols;
    if (s->wlen && wanted(s, s->tal[s->wlen - 1]))
        mv[n++] = (Move){M_W2F, 0, 0, 1};
    for (int i = 0; i < ncols; i++)
        if (s->len[i] && wanted(s, s->col[i][s->len[i] - 1]))
            mv[n++] = (Move){M_C2F, (uint8_t)i, 0, 1};
    int empty = 0, empty0 = -1;
    for (int j = 0; j < ncols; j++)
        if (!s->len[j]) {
            if (empty0 < 0)
                empty0 = j;
            empty++;
        }
    /* The C copy of server.engine.rules.move_limit (RULES.md section 3): onto a card, into an empty column.
     * tests/engine/test_move_rule.py checks both allow the same moves. */
    int onto, into;
    if (x->rule == RULE_SINGLE) {
        onto = into = 1;
    } else if (x->rule == RULE_SEQUENCE) {
        onto = into = 1 << 30;
    } else {
        onto = 1 << empty;
        into = 1 << (empty > 1 ? empty - 1 : 0);
    }
    for (int i = 0; i < ncols; i++) {
        int len = s->len[i];
        if (!len)
            continue;
        const uint8_t *col = s->col[i];
        int run = run_length(col, len);
        int first = x->incomplete ? run : 1;
        int last = run < onto ? run : onto;
        for (int k = first; k <= last; k++) {
            int card = col[len - k];
            if (card % 13 == 12)
                continue;
            int parent = card + 1;
            for (int j = 0; j < ncols; j++)
                if (j != i && s->len[j] && s->col[j][s->len[j] - 1] == parent && n < MAXMOVES)
                    mv[n++] = (Move){M_C2C, (uint8_t)i, (uint8_t)j, (uint8_t)k};
        }
        if (empty) {
            last = run < into ? run : into;
            for (int k = first; k <= last; k++) {
                if (k == len)
                    break; /* the whole column: the same state up to column order */
                if (n < MAXMOVES)
                    mv[n++] = (Move){M_C2E, (uint8_t)i, (uint8_t)empty0, (uint8_t)k};
            }
        }
    }
    if (s->wlen) {
        int card = s->tal[s->wlen - 1];
        if (card % 13 != 12)
            for (int j = 0; j < ncols; j++)
                if (s->len[j] && s->col[j][s->len[j] - 1] == card + 1 && n < MAXMOVES)
                    mv[n++] = (Move){M_W2C, 0, (uint8_t)j, 1};
        if (empty && n < MAXMOVES)
            mv[n++] = (Move){M_W2C, 0, (uint8_t)empty0, 1};
    }
    if (s->tlen > s->wlen)
        mv[n++] = (Move){M_DRAW, 0, 0, 1};
    else if (s->wlen && s->redeals > 0)
        mv[n++] = (Move){M_REDEAL, 0, 0, 1};
    return n;
}

static int waste_moves(const Move *mv, int n) {
    for (int i = 0; i < n; i++)
        if (mv[i].kind == M_W2F || mv[i].kind == M_W2C)
            return 1;
    return 0;
}

/* Apply a move (no auto-play). Returns -1 if a column would pass COLCAP (cannot happen by the bound
 * argument in the file comment; checked so that a wrong argument is an error, never memory corruption). */
static int apply(St *s, const Move *m) {
    switch (m->kind) {
    case M_W2F:
        place(s, s->tal[s->wlen - 1]);
        pop_waste(s);
        break;
    case M_C2F:
        place(s, s->col[m->from][s->len[m->from] - 1]);
        s->len[m->from]--;
        break;
    case M_C2C:
    case M_C2E: {
        int k = m->count, i = m->from, j = m->to;
        if (s->len[j] + k > COLCAP)
            return -1;
        memcpy(s->col[j] + s->len[j], s->col[i] + s->len[i] - k, (size_t)k);
        s->len[j] += (uint8_t)k;
        s->len[i] -= (uint8_t)k;
        break;
    }
    case M_W2C: {
        int j = m->to;
        if (s->len[j] + 1 > COLCAP)
            return -1;
        s->col[j][s->len[j]++] = s->tal[s->wlen - 1];
        pop_waste(s);
        break;
    }
    case M_DRAW:
        s->wlen++;
        break;
    case M_REDEAL:
        s->wlen = 0;
        s->redeals--;
        break;
    }
    return 0;
}

static inline int won(const Search *x, const St *s) {
    if (s->tlen)
        return 0;
    for (int i = 0; i < x->ncols; i++)
        if (s->len[i])
            return 0;
    return 1;
}

static int score(const Search *x, const St *s) {
    int empty = 0, breaks = 0, up = 0;
    for (int i = 0; i < 8; i++)
        up += s->found[i];
    for (int i = 0; i < x->ncols; i++) {
        int n = s->len[i];
        if (!n) {
            empty++;
            continue;
        }
        const uint8_t *col = s->col[i];
        for (int j = 1; j < n; j++)
            if (!(col[j] + 1 == col[j - 1] && col[j - 1] % 13 != 0))
                breaks++;
    }
    return x->a * up + x->b * empty - x->c * breaks - x->w * s->wlen;
}

/* ---- lock check (lock.locked) and stuck waste top (lock.waste_top_stuck): the same least fixpoints ---- */

/* up[c]: copies of c up or that could go up; now[c]: copies of c up in the state (lock.py's counts) */
#define COULD_LEAVE(card) ((card) % 13 == 0 || up[(card) - 1] > now[card] || ((card) % 13 != 12 && top[(card) + 1]))
/* Set flag[card], noting that the fixpoint moved. */
#define MARK(flag, card) do { if (!(flag)[card]) { (flag)[card] = 1; changed = 1; } } while (0)

/* The fixpoint of lock.py over the columns, plus (draws) the stock and the waste. Returns 0 as soon as a
 * column could be emptied (no claim), else 1 with up/top/now at the fixpoint. */
static int fixpoint(const Search *x, const St *s, int draws, uint8_t *up, uint8_t *top, uint8_t *now) {
    int ncols = x->ncols;
    for (int i = 0; i < ncols; i++)
        if (!s->len[i])
            return 0;
    uint8_t exposed[52] = {0};
    int reach[MAXCOLS];
    memset(now, 0, 52);
    memset(top, 0, 52);
    for (int slot = 0; slot < 8; slot++)
        for (int r = 0; r < s->found[slot]; r++)
            now[(slot / 2) * 13 + r]++;
    memcpy(up, now, 52);
    for (int i = 0; i < ncols; i++)
        reach[i] = s->len[i];
    int pile = 0;
    if (draws) {
        for (int t = s->redeals ? 0 : s->wlen; t < s->tlen; t++)
            exposed[s->tal[t]] = 1;
        pile = s->redeals ? 0 : s->wlen;
    }
    int changed = 1;
    while (changed) {
        changed = 0;
        for (int c = 0; c < 52; c++) {
            int most = c % 13 == 0 ? 2 : up[c - 1];
            if (exposed[c] && up[c] < most) {
                up[c] = (uint8_t)most;
                changed = 1;
            }
        }
        for (int c = 51; c >= 0; c--)
            if (exposed[c] && c % 13 != 12 && top[c + 1])
                MARK(top, c);
        while (pile) {
            int card = s->tal[pile - 1];
            MARK(exposed, card);
            if (!COULD_LEAVE(card))
                break;
            pile--;
        }
        for (int i = 0; i < ncols; i++) {
            int r = reach[i];
            while (r) {
                int card = s->col[i][r - 1];
                MARK(top, card);
                MARK(exposed, card);
                if (!COULD_LEAVE(card))
                    break;
                r--;
            }
            if (!r)
                return 0;
            reach[i] = r;
        }
    }
    return 1;
}

static int locked(const Search *x, const St *s) {
    uint8_t up[52], top[52], now[52];
    if (x->rule == RULE_SEQUENCE)
        return 0;
    return fixpoint(x, s, 1, up, top, now);
}

static int waste_top_stuck(const Search *x, const St *s) {
    uint8_t up[52], top[52], now[52];
    if (x->rule == RULE_SEQUENCE || !s->wlen || !fixpoint(x, s, 0, up, top, now))
        return 0;
    int card = s->tal[s->wlen - 1];
    return !COULD_LEAVE(card);
}

#undef COULD_LEAVE
#undef MARK

/* ---- canonical key ---- */

static inline int colcmp(const St *s, int p, int q) {
    int a = s->len[p], b = s->len[q];
    if (a && b && s->col[p][0] != s->col[q][0])
        return (int)s->col[p][0] - (int)s->col[q][0]; /* columns nearly always differ at the bottom card */
    int r = memcmp(s->col[p], s->col[q], (size_t)(a < b ? a : b));
    return r ? r : a - b;
}

/* Insertion sort of the column order (nearly sorted: the parent's order with two columns changed). */
static void sort_order(const Search *x, const St *s, uint8_t *order) {
    for (int k = 1; k < x->ncols; k++) {
        uint8_t v = order[k];
        int m = k - 1;
        while (m >= 0 && colcmp(s, order[m], v) > 0) {
            order[m + 1] = order[m];
            m--;
        }
        order[m + 1] = v;
    }
}

static int encode(const Search *x, St *s, const uint8_t *order, uint8_t *buf) {
    uint8_t *p = buf;
    if (s->dirty)
        compute_mask(x, s);
    for (int i = 0; i < 4; i++)
        *p++ = (uint8_t)(s->found[2 * i] | (s->found[2 * i + 1] << 4));
    *p++ = s->wlen;
    *p++ = s->redeals;
    *p++ = s->tlen;
    memcpy(p, s->mask, (size_t)x->ml);
    p += x->ml;
    for (int k = 0; k < x->ncols; k++) {
        int c = order[k];
        *p++ = s->len[c];
        memcpy(p, s->col[c], s->len[c]);
        p += s->len[c];
    }
    return (int)(p - buf);
}

static uint64_t hash_bytes(const uint8_t *p, int n) {
    uint64_t h = 0x243F6A8885A308D3ull ^ (uint64_t)n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * 0x9E3779B97F4A7C15ull;
        h ^= h >> 29;
        p += 8;
        n -= 8;
    }
    uint64_t w = 0;
    memcpy(&w, p, (size_t)n);
    h = (h ^ w) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
    h *= 0xD6E8FEB86659FD93ull;
    h ^= h >> 32;
    return h;
}

/* Record layout (8-byte aligned, addressed by offset / 8):
 * u32 parent | u8 kind, from, to, count | u16 klen | u16 pad | u8 perm[ncols] | u8 key[klen] */
#define REC_HEAD 12

static inline uint8_t *rec_ptr(const Search *x, uint32_t rec) { return x->arena + ((size_t)rec << 3); }

static inline const uint8_t *rec_key(const Search *x, uint32_t rec, int *klen) {
    const uint8_t *r = rec_ptr(x, rec);
    uint16_t k;
    memcpy(&k, r + 8, 2);
    *klen = k;
    return r + REC_HEAD + x->ncols;
}

static void decode(const Search *x, uint32_t rec, St *s, uint8_t *order) {
    const uint8_t *r = rec_ptr(x, rec);
    const uint8_t *perm = r + REC_HEAD;
    const uint8_t *p = perm + x->ncols;
    for (int i = 0; i < 4; i++) {
        s->found[2 * i] = p[i] & 15;
        s->found[2 * i + 1] = p[i] >> 4;
    }
    p += 4;
    s->wlen = *p++;
    s->redeals = *p++;
    s->tlen = *p++;
    memset(s->mask, 0, sizeof s->mask);
    memcpy(s->mask, p, (size_t)x->ml);
    p += x->ml;
    int j = 0;
    for (int i = 0; i < x->L; i++)
        if (s->mask[i >> 3] & (1u << (i & 7)))
            s->tal[j++] = x->S[i];
    s->dirty = 0;
    for (int k = 0; k < x->ncols; k++) {
        int c = perm[k];
        order[k] = (uint8_t)c;
        s->len[c] = *p++;
        memcpy(s->col[c], p, s->len[c]);
        p += s->len[c];
    }
}

static int table_grow(Search *x) {
    size_t ncap = x->tcap ? x->tcap * 2 : (1u << 16);
    Slot *nt = calloc(ncap, sizeof(Slot));
    if (!nt)
        return -1;
    for (size_t i = 0; i < x->tcap; i++) {
        if (!x->tab[i].rec)
            continue;
        int klen;
        const uint8_t *k = rec_key(x, x->tab[i].rec, &klen);
        uint64_t h = hash_bytes(k, klen);
        size_t idx = (size_t)h & (ncap - 1);
        while (nt[idx].rec)
            idx = (idx + 1) & (ncap - 1);
        nt[idx] = x->tab[i];
    }
    free(x->tab);
    x->tab = nt;
    x->tcap = ncap;
    return 0;
}

static double now(void);

/* Find the key; returns 1 if present, else 0 with *slot the empty slot to fill; -1 on memory failure; FIND_TIME
 * when the table must double and that would outlast the time cap. A doubling rehashes every stored state at once
 * (about 6 s at 16.7 M states), which the search's time check, every 256 nodes, cannot interrupt: a 60-second
 * cap ended at 66 s. Each doubling takes about twice the one before, so the search ends (time) instead when
 * that estimate would pass the deadline. */
static int table_find(Search *x, const uint8_t *key, int klen, uint64_t h, size_t *slot) {
    if ((x->tcount + 1) * 2 > x->tcap) {
        double started = now();
        if (x->deadline > 0 && started + 2.2 * x->grow_s > x->deadline)
            return FIND_TIME;
        if (table_grow(x) < 0)
            return -1;
        x->grow_s = now() - started;
    }
    size_t m = x->tcap - 1, idx = (size_t)h & m;
    uint32_t frag = (uint32_t)(h >> 32);
    while (x->tab[idx].rec) {
        if (x->tab[idx].frag == frag) {
            int olen;
            const uint8_t *ok = rec_key(x, x->tab[idx].rec, &olen);
            if (olen == klen && memcmp(ok, key, (size_t)klen) == 0)
                return 1;
        }
        idx = (idx + 1) & m;
    }
    *slot = idx;
    return 0;
}

/* Append a record; returns its index or 0 on memory failure. */
static uint32_t add_record(Search *x, uint32_t parent, const Move *m, const uint8_t *order, const uint8_t *key,
                           int klen) {
    size_t size = (REC_HEAD + (size_t)x->ncols + (size_t)klen + 7) & ~(size_t)7;
    if (x->used + size > x->cap) {
        size_t nc = x->cap ? x->cap * 2 : (1u << 22);
        while (nc < x->used + size)
            nc *= 2;
        if ((nc >> 3) > 0xFFFFFFF0u)
            return 0;
        uint8_t *p = realloc(x->arena, nc);
        if (!p)
            return 0;
        x->arena = p;
        x->cap = nc;
    }
    uint8_t *r = x->arena + x->used;
    uint16_t k16 = (uint16_t)klen, pad = 0;
    memcpy(r, &parent, 4);
    r[4] = m->kind;
    r[5] = m->from;
    r[6] = m->to;
    r[7] = m->count;
    memcpy(r + 8, &k16, 2);
    memcpy(r + 10, &pad, 2);
    memcpy(r + REC_HEAD, order, (size_t)x->ncols);
    memcpy(r + REC_HEAD + x->ncols, key, (size_t)klen);
    /* the padding zeroed: the prover writes the arena to its proof file, which must hold no stray heap bytes */
    memset(r + REC_HEAD + x->ncols + klen, 0, size - REC_HEAD - (size_t)x->ncols - (size_t)klen);
    uint32_t rec = (uint32_t)(x->used >> 3);
    x->used += size;
    return rec;
}

/* ---- dominance pruning (dominance.py: the proof that skipping such a state keeps exhaustion a proof) ---- */

/* dominance.inert for build in suit: both slots of the suit hold at least the rank index, one exactly. */
static inline int inert(const St *s, int c) {
    int k = c % 13, b = (c / 13) * 2;
    return s->found[b] >= k && (s->found[b] == k || s->found[b + 1] == k);
}

/* Is t, auto-played, already in the table? 1 yes, 0 no, -1 memory failure, FIND_TIME (see table_find). */
static int seen_state(Search *x, St *t) {
    uint8_t order[MAXCOLS], key[KEYCAP];
    size_t slot;
    autoplay(x, t, 0);
    for (int k = 0; k < x->ncols; k++)
        order[k] = (uint8_t)k;
    sort_order(x, t, order);
    int klen = encode(x, t, order, key);
    return table_find(x, key, klen, hash_bytes(key, klen), &slot);
}

/* dominance.dominated: some state with one inert card below the waste top of s taken up is in the table (1),
 * none (0), memory failure (-1), FIND_TIME (see table_find). */
static int dominated(Search *x, const St *s) {
    St t;
    size_t copy = offsetof(St, col) + (size_t)x->ncols * COLCAP;
    for (int j = 0; j + 1 < s->wlen; j++) {
        int c = s->tal[j];
        if (!inert(s, c))
            continue;
        memcpy(&t, s, copy);
        memmove(t.tal + j, t.tal + j + 1, (size_t)(t.tlen - 1 - j));
        t.tlen--;
        t.wlen--;
        t.dirty = 1;
        place(&t, c);
        int got = seen_state(x, &t);
        if (got)
            return got;
    }
    return 0;
}

/* ---- heap ---- */

/* Double a growable array *items of *cap elements of `size` bytes (to `first` when empty). 0, or -1 on memory
 * (the array is left as it was). */
static int grow(void **items, size_t *cap, size_t first, size_t size) {
    size_t nc = *cap ? *cap * 2 : first;
    void *p = realloc(*items, nc * size);
    if (!p)
        return -1;
    *items = p;
    *cap = nc;
    return 0;
}

static int heap_push(Search *x, uint64_t key, uint32_t rec) {
    if (x->hn == x->hcap && grow((void **)&x->heap, &x->hcap, 4096, sizeof(HeapItem)) < 0)
        return -1;
    size_t i = x->hn++;
    while (i) {
        size_t up = (i - 1) / 2;
        if (x->heap[up].key <= key)
            break;
        x->heap[i] = x->heap[up];
        i = up;
    }
    x->heap[i].key = key;
    x->heap[i].rec = rec;
    return 0;
}

static uint32_t heap_pop(Search *x) {
    uint32_t out = x->heap[0].rec;
    HeapItem last = x->heap[--x->hn];
    size_t i = 0, n = x->hn;
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        size_t c = (l + 1 < n && x->heap[l + 1].key < x->heap[l].key) ? l + 1 : l;
        if (x->heap[c].key >= last.key)
            break;
        x->heap[i] = x->heap[c];
        i = c;
    }
    if (n)
        x->heap[i] = last;
    return out;
}

static inline uint64_t heap_key(const Search *x, int priority, uint32_t counter) {
    uint32_t p = (uint32_t)priority ^ 0x80000000u;
    uint32_t t = x->lifo ? 0xFFFFFFFFu - counter : counter;
    return ((uint64_t)p << 32) | t;
}

/* ---- the solution: parent links from the won state back to the root, replayed for column numbers ---- */

static int build_solution(Search *x, uint32_t last) {
    size_t n = 0, cap = 256;
    uint32_t *path = malloc(cap * sizeof(uint32_t));
    if (!path)
        return -1;
    for (uint32_t r = last; r != 0xFFFFFFFFu;) {
        if (n == cap) {
            uint32_t *p = realloc(path, cap * 2 * sizeof(uint32_t));
            if (!p) {
                free(path);
                return -1;
            }
            path = p;
            cap *= 2;
        }
        path[n++] = r;
        memcpy(&r, rec_ptr(x, r), 4);
    }
    /* path[n-1] is the root; each other record holds the move from its parent's state. */
    St s;
    uint8_t order[MAXCOLS];
    char buf[16];
    for (size_t i = n - 1; i-- > 0;) {
        const uint8_t *r = rec_ptr(x, path[i]);
        Move m = {r[4], r[5], r[6], r[7]};
        decode(x, path[i + 1], &s, order);
        move_text(&m, buf);
        if (emit(x, buf) < 0 || (!x->autoplay_on && (apply(&s, &m) < 0 || autoplay(x, &s, 1) < 0))) {
            free(path);
            return -1;
        }
    }
    free(path);
    return 0;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* One best-first stage (search._search with weight 0). The start is not yet auto-played. */
static void run(Search *x, St *start) {
    static const Move none = {M_NONE, 0, 0, 0};
    uint8_t order[MAXCOLS], corder[MAXCOLS];
    uint8_t key[KEYCAP];
    Move *mv = malloc(MAXMOVES * sizeof(Move));
    if (!mv) {
        x->outcome = R_MEMORY;
        return;
    }
    x->deadline = x->seconds >= 0 ? now() + x->seconds : 0;
    x->grow_s = 0;
    x->used = 8; /* offset 0 means "no record" in the table */
    if (!x->autoplay_on) {
        if (autoplay(x, start, 1) < 0)
            goto memory;
    } else {
        autoplay(x, start, 0);
    }
    for (int i = 0; i < x->ncols; i++)
        order[i] = (uint8_t)i;
    sort_order(x, start, order);
    int klen = encode(x, start, order, key);
    size_t slot;
    int first = table_find(x, key, klen, hash_bytes(key, klen), &slot);
    if (first == FIND_TIME) /* the cap was spent before the search began (solve passes 0 s then) */
        goto out_of_time;
    if (first < 0)
        goto memory;
    uint32_t root = add_record(x, 0xFFFFFFFFu, &none, order, key, klen);
    if (!root)
        goto memory;
    x->tab[slot].rec = root;
    x->tab[slot].frag = (uint32_t)(hash_bytes(key, klen) >> 32);
    x->tcount = 1;
    x->nodes = 0;
    if (won(x, start)) {
        x->outcome = R_SOLVED;
        goto done;
    }
    if ((x->locks & (LOCKS_DRAWS | LOCKS_ALL)) && locked(x, start)) {
        x->outcome = R_EXHAUSTED;
        goto done;
    }
    uint32_t counter = 0;
    if (heap_push(x, heap_key(x, -score(x, start), 0), root) < 0)
        goto memory;
    St p, c;
    size_t copy = offsetof(St, col) + (size_t)x->ncols * COLCAP;
    while (x->hn) {
        if (x->nodes >= x->max_nodes) {
            x->outcome = R_NODES;
            goto done;
        }
        if (x->seconds >= 0 && x->nodes % 256 == 0 && now() > x->deadline) {
            x->outcome = R_TIME;
            goto done;
        }
        if ((long long)x->tcount > x->max_states) {
            x->outcome = R_STATES;
            goto done;
        }
        if (x->nodes && (x->nodes & 0xFFFF) == 0) {
            /* Ctrl-C: the search runs without the GIL, so Python's handler would wait for the whole search.
               Every 65,536 nodes take the GIL back for a moment and let a pending signal end the search
               (py_search then raises what the handler raised, e.g. KeyboardInterrupt). */
            PyGILState_STATE gil = PyGILState_Ensure();
            int interrupted = PyErr_CheckSignals() < 0;
            PyGILState_Release(gil);
            if (interrupted) {
                x->outcome = R_INTERRUPTED;
                goto done;
            }
        }
        uint32_t rec = heap_pop(x);
        x->nodes++;
        decode(x, rec, &p, order);
        int n = gen_moves(x, &p, mv);
        if ((x->locks & LOCKS_INERT) && p.tlen > p.wlen && inert(&p, p.tal[p.wlen])) {
            mv[0] = mv[n - 1]; /* only the draw: its child dominates this state (dominance.py) */
            n = 1;
            x->draw_only++;
        }
        /* A waste top that can move now is not stuck (the fixpoint would say so too): skip the check. */
        else if ((x->locks & LOCKS_STUCK) && p.tlen > p.wlen && !waste_moves(mv, n) && waste_top_stuck(x, &p)) {
            mv[0] = mv[n - 1]; /* only the draw, the last move generated (exact: lock.waste_top_stuck) */
            n = 1;
        }
        for (int i = 0; i < n; i++) {
            memcpy(&c, &p, copy);
            if (apply(&c, &mv[i]) < 0) {
                x->outcome = R_CAPACITY;
                goto done;
            }
            autoplay(x, &c, 0);
            memcpy(corder, order, (size_t)x->ncols);
            sort_order(x, &c, corder);
            klen = encode(x, &c, corder, key);
            uint64_t h = hash_bytes(key, klen);
            int found = table_find(x, key, klen, h, &slot);
            if (found == FIND_TIME)
                goto out_of_time;
            if (found < 0)
                goto memory;
            if (found)
                continue;
            uint32_t child = add_record(x, rec, &mv[i], corder, key, klen);
            if (!child)
                goto memory;
            x->tab[slot].rec = child;
            x->tab[slot].frag = (uint32_t)(h >> 32);
            x->tcount++;
            if (won(x, &c)) {
                if (build_solution(x, child) < 0)
                    goto memory;
                x->outcome = R_SOLVED;
                goto done;
            }
            if ((x->locks & (LOCKS_DRAWS | LOCKS_ALL)) && (mv[i].kind == M_DRAW || (x->locks & LOCKS_ALL))
                && locked(x, &c))
                continue;
            if (x->locks & LOCKS_DOMINANCE) {
                int got = dominated(x, &c);
                if (got == FIND_TIME)
                    goto out_of_time;
                if (got < 0)
                    goto memory;
                if (got) {
                    x->dominated++;
                    continue;
                }
            }
            counter++;
            if (heap_push(x, heap_key(x, -score(x, &c), counter), child) < 0)
                goto memory;
        }
    }
    x->outcome = R_EXHAUSTED;
    goto done;
out_of_time:
    x->outcome = R_TIME;
    goto done;
memory:
    x->outcome = R_MEMORY;
done:
    x->states = (long long)x->tcount;
    free(mv);
}

static void release(Search *x) {
    free(x->arena);
    free(x->tab);
    free(x->heap);
    free(x->text);
}

/* ---- the layered prover (prover.py's search in C; its module docstring has the proof) ----
 *
 * The complete search's expansion above (same moves, auto-play, canonical identity, the lock check after draws,
 * the draw-only expansions of a stuck waste top and of an inert next stock card), but the states wait in one FIFO
 * queue per monotone layer (redeals used, cards drawn in this pass, cards up), the least layer first, so layers
 * are searched one after another and breadth-first within one (the pure prover's order; a queue costs 4 bytes
 * a state where a heap cost 16 and a cache miss per level). No command lowers the layer, so once the least
 * layer waiting passes L no state of a layer up to L is met again: such records are dropped from the arena and
 * the table (compact). What a solution needs of them, each state's parent and move, is written to a links file,
 * 8 bytes a state, read back only to trace a win. Records here: u32 serial | u8 kind, from, to, count | u16 klen
 * | u16 pending (1: queued, to be expanded; 0: expanded or proven locked) | perm | key. */

#define NO_LAYER 0xFFFFFFFFu
#define PROOF_MAGIC "FTRPRV3"

typedef struct {
    uint32_t layer;
    uint32_t *items; /* records, oldest first; [head, len) still to expand */
    size_t head, len, cap;
} Queue;

typedef struct {
    Search x;
    int r0, ns0;             /* redeals and stock cards at the start */
    uint32_t current;        /* the layer being expanded (NO_LAYER before the first) */
    long long serial;        /* records ever made, the root included; a record's serial is its index */
    Queue *queues;           /* one per layer with states waiting, ascending by layer */
    size_t nq, qcap, pending, qbytes;
    long long locked, layers, largest_layer, layer_nodes, most_pending, peak_bytes, nodes0;
    uint32_t largest_key;
    long long won_serial;    /* -1 until a win is met */
    size_t max_bytes;        /* 0: no cap */
    double report_s;         /* seconds between progress lines on stderr (< 0: none) */
    FILE *links;
} Prover;

static inline uint32_t layer_key(const Prover *p, int up, int wlen, int redeals, int tlen) {
    int stock = tlen - wlen, used = p->r0 - redeals;
    int turned = used == 0 ? p->ns0 - stock : 255 - stock;
    return ((uint32_t)used << 16) | ((uint32_t)turned << 8) | (uint32_t)up;
}

static uint32_t layer_of_state(const Prover *p, const St *s) {
    int up = 0;
    for (int i = 0; i < 8; i++)
        up += s->found[i];
    return layer_key(p, up, s->wlen, s->redeals, s->tlen);
}

static uint32_t layer_of_record(const Prover *p, uint32_t rec) {
    int klen;
    const uint8_t *k = rec_key(&p->x, rec, &klen);
    int up = 0;
    for (int i = 0; i < 4; i++)
        up += (k[i] & 15) + (k[i] >> 4);
    return layer_key(p, up, k[4], k[5], k[6]);
}

static inline size_t rec_size(const Search *x, uint32_t rec) {
    uint16_t k;
    memcpy(&k, rec_ptr(x, rec) + 8, 2);
    return (REC_HEAD + (size_t)x->ncols + k + 7) & ~(size_t)7;
}

static inline void set_pending(Search *x, uint32_t rec, uint16_t v) { memcpy(rec_ptr(x, rec) + 10, &v, 2); }

static inline uint16_t get_pending(const Search *x, uint32_t rec) {
    uint16_t v;
    memcpy(&v, rec_ptr(x, rec) + 10, 2);
    return v;
}

/* The storage in use: the arena's records (its capacity beyond them is never written, so a large realloc'd
 * block does not hold pages for it), the table and the queues. */
static size_t prover_bytes(const Prover *p) {
    return p->x.used + p->x.tcap * sizeof(Slot) + p->qbytes + p->qcap * sizeof(Queue);
}

/* Append rec to its layer's queue (made when missing). 0, or -1 on memory. */
static int enqueue(Prover *p, uint32_t layer, uint32_t rec) {
    size_t lo = 0, hi = p->nq;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->queues[mid].layer < layer)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == p->nq || p->queues[lo].layer != layer) {
        if (p->nq == p->qcap && grow((void **)&p->queues, &p->qcap, 64, sizeof(Queue)) < 0)
            return -1;
        memmove(p->queues + lo + 1, p->queues + lo, (p->nq - lo) * sizeof(Queue));
        p->queues[lo] = (Queue){layer, NULL, 0, 0, 0};
        p->nq++;
    }
    Queue *q = &p->queues[lo];
    if (q->len == q->cap) {
        size_t before = q->cap;
        if (grow((void **)&q->items, &q->cap, 256, sizeof(uint32_t)) < 0)
            return -1;
        p->qbytes += (q->cap - before) * sizeof(uint32_t);
    }
    q->items[q->len++] = rec;
    p->pending++;
    return 0;
}

/* The least layer with a state waiting (the queues of finished layers freed), or NO_LAYER. */
static uint32_t least_layer(Prover *p) {
    size_t done = 0;
    while (done < p->nq && p->queues[done].head == p->queues[done].len) {
        free(p->queues[done].items);
        p->qbytes -= p->queues[done].cap * sizeof(uint32_t);
        done++;
    }
    if (done) {
        memmove(p->queues, p->queues + done, (p->nq - done) * sizeof(Queue));
        p->nq -= done;
    }
    return p->nq ? p->queues[0].layer : NO_LAYER;
}

static inline uint32_t dequeue(Prover *p) {
    p->pending--;
    return p->queues[0].items[p->queues[0].head++];
}

static void release_prover(Prover *p) {
    for (size_t i = 0; i < p->nq; i++)
        free(p->queues[i].items);
    free(p->queues);
    release(&p->x);
}

/* Rebuild the table from the arena's records (after a compaction or a resume). */
static int table_rebuild(Search *x, size_t count) {
    size_t ncap = 1u << 16;
    while (ncap < 2 * (count + 1))
        ncap *= 2;
    free(x->tab);
    x->tab = calloc(ncap, sizeof(Slot));
    if (!x->tab)
        return -1;
    x->tcap = ncap;
    x->tcount = 0;
    for (size_t off = 8; off < x->used;) {
        uint32_t rec = (uint32_t)(off >> 3);
        int klen;
        const uint8_t *k = rec_key(x, rec, &klen);
        uint64_t h = hash_bytes(k, klen);
        size_t idx = (size_t)h & (ncap - 1);
        while (x->tab[idx].rec)
            idx = (idx + 1) & (ncap - 1);
        x->tab[idx].rec = rec;
        x->tab[idx].frag = (uint32_t)(h >> 32);
        x->tcount++;
        off += rec_size(x, rec);
    }
    return 0;
}

/* Drop every record of a layer before `keep` (all expanded: no queue holds one) and rebuild the table; the
 * queues' items are moved to the records' new places (the old arena forwards them). 0, or -1 on memory. */
static int compact(Prover *p, uint32_t keep) {
    Search *x = &p->x;
    size_t live = 8, count = 0;
    for (size_t off = 8; off < x->used;) {
        uint32_t rec = (uint32_t)(off >> 3);
        size_t size = rec_size(x, rec);
        if (layer_of_record(p, rec) >= keep)
            live += size, count++;
        off += size;
    }
    size_t ncap = 1u << 22;
    while (ncap < live)
        ncap *= 2;
    uint8_t *na = malloc(ncap);
    if (!na)
        return -1;
    memset(na, 0, 8);
    size_t at = 8;
    for (size_t off = 8; off < x->used;) {
        uint32_t rec = (uint32_t)(off >> 3);
        size_t size = rec_size(x, rec);
        if (layer_of_record(p, rec) >= keep) {
            memcpy(na + at, x->arena + off, size);
            uint32_t moved = (uint32_t)(at >> 3);
            memcpy(x->arena + off + 4, &moved, 4); /* the old record's move field: not needed again */
            at += size;
        }
        off += size;
    }
    for (size_t i = 0; i < p->nq; i++) {
        Queue *q = &p->queues[i];
        for (size_t j = q->head; j < q->len; j++)
            memcpy(&q->items[j], x->arena + ((size_t)q->items[j] << 3) + 4, 4);
    }
    free(x->arena);
    x->arena = na;
    x->cap = ncap;
    x->used = at;
    return table_rebuild(x, count);
}

static int write_link(Prover *p, uint32_t parent, const Move *m) {
    uint8_t b[8];
    memcpy(b, &parent, 4);
    b[4] = m->kind, b[5] = m->from, b[6] = m->to, b[7] = m->count;
    return fwrite(b, 8, 1, p->links) == 1 ? 0 : -1;
}

/* A new record of state c (key, order) reached from serial `parent` by m; its serial, or -1 on failure. */
static long long prover_add(Prover *p, uint32_t parent, const Move *m, const uint8_t *order, const uint8_t *key,
                            int klen, size_t slot, uint64_t h, uint16_t pending, uint32_t *rec_out) {
    Search *x = &p->x;
    if (p->serial >= 0xFFFFFFFFll) /* a serial is 32 bits in the records and the links: the arena's bound too */
        return -1;
    uint32_t serial = (uint32_t)p->serial;
    uint32_t rec = add_record(x, serial, m, order, key, klen);
    if (!rec || write_link(p, parent, m) < 0)
        return -1;
    set_pending(x, rec, pending);
    x->tab[slot].rec = rec;
    x->tab[slot].frag = (uint32_t)(h >> 32);
    x->tcount++;
    *rec_out = rec;
    return p->serial++;
}

/* The winning commands: parent links from the won state back to the root, replayed from the start. */
static int prover_solution(Prover *p, const St *start) {
    Search *x = &p->x;
    size_t n = 0, cap = 256;
    uint8_t (*path)[8] = malloc(cap * 8);
    if (!path || fflush(p->links) != 0)
        goto fail;
    for (long long s = p->won_serial; s > 0;) {
        if (n == cap) {
            void *q = realloc(path, cap * 2 * 8);
            if (!q)
                goto fail;
            path = q;
            cap *= 2;
        }
        if (fseeko(p->links, (off_t)s * 8, SEEK_SET) != 0 || fread(path[n], 8, 1, p->links) != 1)
            goto fail;
        uint32_t parent;
        memcpy(&parent, path[n], 4);
        n++;
        s = parent;
    }
    fseeko(p->links, 0, SEEK_END);
    St s;
    char buf[16];
    memcpy(&s, start, sizeof s);
    if (autoplay(x, &s, !x->autoplay_on) < 0)
        goto fail;
    for (size_t i = n; i-- > 0;) {
        Move m = {path[i][4], path[i][5], path[i][6], path[i][7]};
        move_text(&m, buf);
        if (emit(x, buf) < 0 || apply(&s, &m) < 0 || autoplay(x, &s, !x->autoplay_on) < 0)
            goto fail;
    }
    free(path);
    return won(x, &s) ? 0 : -1;
fail:
    free(path);
    return -1;
}

enum { P_SOLVED = 0, P_EXHAUSTED, P_NODES, P_TIME, P_MEMORY, P_CAPACITY, P_IO, P_INTERRUPTED, P_OTHER };

/* ---- the proof file: the arena of a layer boundary (every record pending or locked), counts, the config ---- */

typedef struct {
    char magic[8];
    int32_t ncols, L, rule, locks, autoplay_on, r0, ns0, outcome;
    uint8_t S[TALCAP];
    uint8_t root[KEYCAP];
    int32_t root_len;
    uint32_t current, largest_key;
    int64_t nodes, serial, locked, draw_only, layers, largest_layer, most_pending, won_serial;
    uint64_t check; /* proof_check of the head (this field 0) and the records: a damaged file is refused */
    uint64_t used;
} ProofHead;

/* A checksum of the head and the arena's used bytes (hash_bytes over 1 MiB pieces, chained). */
static uint64_t proof_check(const ProofHead *h, const uint8_t *arena, size_t used) {
    ProofHead zero = *h;
    zero.check = 0;
    uint64_t c = hash_bytes((const uint8_t *)&zero, (int)sizeof zero);
    for (size_t at = 0; at < used; at += 1u << 20) {
        size_t n = used - at < (1u << 20) ? used - at : (1u << 20);
        c = (c ^ hash_bytes(arena + at, (int)n)) * 0x9E3779B97F4A7C15ull;
    }
    return c;
}

/* Whether the record at rec (its bytes within used) holds a key decode can read: the lengths in range and adding
 * up to its klen. */
static int record_sound(const Search *x, uint32_t rec) {
    size_t off = (size_t)rec << 3;
    if (off + REC_HEAD > x->used)
        return 0;
    int klen;
    const uint8_t *k = rec_key(x, rec, &klen);
    const uint8_t *perm = rec_ptr(x, rec) + REC_HEAD;
    if (off + rec_size(x, rec) > x->used || klen < 7 + x->ml + x->ncols || klen > KEYCAP)
        return 0;
    for (int i = 0; i < 4; i++)
        if ((k[i] & 15) > 13 || (k[i] >> 4) > 13)
            return 0;
    if (k[4] > k[6] || k[6] > x->L)
        return 0;
    int at = 7 + x->ml;
    for (int i = 0; i < x->ncols; i++) {
        if (perm[i] >= x->ncols || k[at] > COLCAP || at + 1 + k[at] > klen)
            return 0;
        at += 1 + k[at];
    }
    return at == klen;
}

static void fill_head(const Prover *p, ProofHead *h, const uint8_t *root, int root_len) {
    const Search *x = &p->x;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, PROOF_MAGIC, 8);
    h->ncols = x->ncols, h->L = x->L, h->rule = x->rule, h->locks = x->locks, h->autoplay_on = x->autoplay_on;
    h->r0 = p->r0, h->ns0 = p->ns0, h->outcome = x->outcome;
    memcpy(h->S, x->S, TALCAP);
    memcpy(h->root, root, (size_t)root_len);
    h->root_len = root_len;
    h->current = p->current, h->largest_key = p->largest_key;
    h->nodes = x->nodes, h->serial = p->serial, h->locked = p->locked;
    h->draw_only = x->draw_only, h->layers = p->layers, h->largest_layer = p->largest_layer;
    h->most_pending = p->most_pending, h->won_serial = p->won_serial, h->used = x->used;
    h->check = proof_check(h, x->arena, x->used);
}

/* Write the checkpoint to path (through path.tmp, renamed: a stop at any moment leaves the last whole one). */
static int save_proof(Prover *p, const char *path, const uint8_t *root, int root_len) {
    char tmp[4200];
    /* the links the checkpoint counts on are on disk before it is */
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp || fflush(p->links) != 0
        || fsync(fileno(p->links)) != 0)
        return -1;
    ProofHead h;
    fill_head(p, &h, root, root_len);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return -1;
    int ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(p->x.arena, 1, p->x.used, f) == p->x.used;
    ok = fflush(f) == 0 && ok;
    ok = fsync(fileno(f)) == 0 && ok;
    ok = fclose(f) == 0 && ok;
    if (ok && rename(tmp, path) == 0)
        return 0;
    remove(tmp); /* a part-written checkpoint is of no use, and the last whole one is still at path */
    return -1;
}

/* Read a checkpoint into p; 1 when the file matches this input and was read, 0 when it is of another input
 * (nothing changed), -2 when it is no proof file of this format, -3 when it is one but damaged (its length, its
 * checksum or a record wrong), -1 on a read or memory failure. The queues are rebuilt from the pending records in
 * arena order, which is their order in the queues (FIFO within a layer). */
static int load_proof(Prover *p, FILE *f, const uint8_t *root, int root_len) {
    Search *x = &p->x;
    ProofHead h, mine;
    if (fread(&h, sizeof h, 1, f) != 1 || memcmp(h.magic, PROOF_MAGIC, 8))
        return -2;
    fill_head(p, &mine, root, root_len);
    if (h.ncols != mine.ncols || h.L != mine.L || h.rule != mine.rule
        || h.locks != mine.locks || h.autoplay_on != mine.autoplay_on || h.r0 != mine.r0 || h.ns0 != mine.ns0
        || memcmp(h.S, mine.S, TALCAP) || h.root_len != root_len || memcmp(h.root, root, (size_t)root_len))
        return 0;
    /* the length before any allocation: a damaged used must not ask for exabytes */
    off_t size;
    if (fseeko(f, 0, SEEK_END) != 0 || (size = ftello(f)) < 0 || fseeko(f, (off_t)sizeof h, SEEK_SET) != 0)
        return -1;
    if (h.used < 8 || h.used % 8 || h.used > (uint64_t)0xFFFFFFFFu << 3 || (uint64_t)size != sizeof h + h.used
        || h.serial < 1 || h.serial > 0xFFFFFFFFll || h.won_serial < -1 || h.won_serial >= h.serial
        || (h.outcome != P_SOLVED) != (h.won_serial < 0))
        return -3;
    size_t ncap = 1u << 22;
    while (ncap < h.used)
        ncap *= 2;
    free(x->arena);
    x->arena = malloc(ncap);
    if (!x->arena)
        return -1;
    x->cap = ncap;
    x->used = h.used;
    if (fread(x->arena, 1, h.used, f) != h.used)
        return -1;
    if (proof_check(&h, x->arena, x->used) != h.check)
        return -3;
    x->outcome = h.outcome, x->nodes = h.nodes, x->draw_only = h.draw_only;
    p->current = h.current, p->largest_key = h.largest_key, p->serial = h.serial;
    p->locked = h.locked, p->layers = h.layers, p->largest_layer = h.largest_layer;
    p->most_pending = h.most_pending, p->won_serial = h.won_serial;
    size_t count = 0;
    for (size_t off = 8; off < x->used; count++) {
        uint32_t rec = (uint32_t)(off >> 3);
        if (!record_sound(x, rec))
            return -3;
        if (get_pending(x, rec) && enqueue(p, layer_of_record(p, rec), rec) < 0)
            return -1;
        off += rec_size(x, rec);
    }
    return table_rebuild(x, count) < 0 ? -1 : 1;
}

/* The root of a proof: the start auto-played into first, its column order and its key (which identifies the
 * input in a proof file); the key's length. */
static int root_key(Search *x, const St *start, St *first, uint8_t *order, uint8_t *root) {
    memcpy(first, start, sizeof *first);
    autoplay(x, first, 0);
    for (int i = 0; i < x->ncols; i++)
        order[i] = (uint8_t)i;
    sort_order(x, first, order);
    return encode(x, first, order, root);
}

/* Search layers until a verdict or a budget (checked at layer boundaries: a layer is never cut, except by the
 * memory cap, which loses the work since the last checkpoint). The start is not yet auto-played. */
static int prove_run(Prover *p, const St *start, long long max_nodes, double seconds, double checkpoint_s,
                     const char *path, int resumed) {
    Search *x = &p->x;
    static const Move none = {M_NONE, 0, 0, 0};
    uint8_t order[MAXCOLS], corder[MAXCOLS], key[KEYCAP], root[KEYCAP];
    St first, par, c;
    int root_len = root_key(x, start, &first, order, root);
    double started = now(), saved = started, reported = started;
    long long nodes0 = p->nodes0 = x->nodes;
    if (!resumed) {
        x->used = 8;
        p->current = NO_LAYER;
        p->won_serial = -1;
        if (table_rebuild(x, 0) < 0)
            return P_MEMORY;
        size_t slot;
        uint64_t h = hash_bytes(root, root_len);
        table_find(x, root, root_len, h, &slot);
        uint32_t rec;
        if (prover_add(p, 0xFFFFFFFFu, &none, order, root, root_len, slot, h, 1, &rec) < 0)
            return P_MEMORY;
        memset(x->arena, 0, 8); /* no record at offset 0 (0 means none): written to the proof file as zeros */
        if (won(x, &first)) {
            p->won_serial = 0;
            return P_SOLVED;
        }
        if (locked(x, &first)) {
            set_pending(x, rec, 0);
            return P_EXHAUSTED;
        }
        if (enqueue(p, layer_of_state(p, &first), rec) < 0)
            return P_MEMORY;
    } else if (x->outcome == P_SOLVED || x->outcome == P_EXHAUSTED) {
        return x->outcome;
    }
    Move *mv = malloc(MAXMOVES * sizeof(Move));
    if (!mv)
        return P_MEMORY;
    size_t copy = offsetof(St, col) + (size_t)x->ncols * COLCAP;
    int outcome = P_EXHAUSTED;
    for (;;) {
        uint32_t top = least_layer(p);
        if (top != p->current) { /* a layer boundary */
            if (p->current != NO_LAYER) {
                p->layers++;
                if (p->layer_nodes > p->largest_layer)
                    p->largest_layer = p->layer_nodes, p->largest_key = p->current;
            }
            p->layer_nodes = 0;
            if (top == NO_LAYER)
                break;
            if ((long long)p->pending > p->most_pending)
                p->most_pending = (long long)p->pending;
            p->current = top;
            if (p->report_s >= 0 && now() - reported >= p->report_s) {
                reported = now();
                fprintf(stderr, "  layer (%u, %u, %u): %lld nodes, %zu pending, %lld layers, %.0f states/s, %zu MiB\n",
                        top >> 16, (top >> 8) & 255, top & 255, x->nodes, p->pending, p->layers,
                        (double)(x->nodes - nodes0) / (reported - started + 1e-9), prover_bytes(p) >> 20);
            }
            int stop = (max_nodes >= 0 && x->nodes - nodes0 >= max_nodes) ? P_NODES
                       : (seconds >= 0 && now() - started >= seconds) ? P_TIME : -1;
            int save = path && (stop >= 0 || (checkpoint_s >= 0 && now() - saved >= checkpoint_s));
            /* dropped records past a quarter of the pending ones: about 4 copies per record, a tenth of the time */
            if ((save || x->tcount > p->pending + p->pending / 4 + (1u << 20)) && compact(p, top) < 0) {
                outcome = P_MEMORY;
                goto done;
            }
            if (save) {
                x->outcome = stop >= 0 ? stop : P_OTHER;
                if (save_proof(p, path, root, root_len) < 0) {
                    outcome = P_IO;
                    goto done;
                }
                saved = now();
            }
            if (stop >= 0) {
                outcome = stop;
                goto done;
            }
        }
        if (x->nodes && (x->nodes & 0xFFFF) == 0) {
            PyGILState_STATE gil = PyGILState_Ensure();
            int interrupted = PyErr_CheckSignals() < 0;
            PyGILState_Release(gil);
            if (interrupted) {
                outcome = P_INTERRUPTED;
                goto done;
            }
        }
        uint32_t rec = dequeue(p);
        uint32_t me;
        memcpy(&me, rec_ptr(x, rec), 4);
        set_pending(x, rec, 0);
        x->nodes++;
        p->layer_nodes++;
        decode(x, rec, &par, order);
        int n = gen_moves(x, &par, mv);
        if (par.tlen > par.wlen && inert(&par, par.tal[par.wlen])) {
            mv[0] = mv[n - 1]; /* only the draw: its child dominates this state (dominance.py) */
            n = 1;
            x->draw_only++;
        } else if (par.tlen > par.wlen && !waste_moves(mv, n) && waste_top_stuck(x, &par)) {
            mv[0] = mv[n - 1]; /* only the draw (exact: lock.waste_top_stuck) */
            n = 1;
        }
        for (int i = 0; i < n; i++) {
            memcpy(&c, &par, copy);
            if (apply(&c, &mv[i]) < 0) {
                outcome = P_CAPACITY;
                goto done;
            }
            autoplay(x, &c, 0);
            memcpy(corder, order, (size_t)x->ncols);
            sort_order(x, &c, corder);
            int klen = encode(x, &c, corder, key);
            uint64_t h = hash_bytes(key, klen);
            size_t slot;
            int found = table_find(x, key, klen, h, &slot);
            if (found < 0) {
                outcome = P_MEMORY;
                goto done;
            }
            if (found)
                continue;
            int lost = (mv[i].kind == M_DRAW || (x->locks & LOCKS_ALL)) && locked(x, &c);
            uint32_t child;
            long long serial = prover_add(p, me, &mv[i], corder, key, klen, slot, h, (uint16_t)!lost, &child);
            if (serial < 0) {
                outcome = P_MEMORY;
                goto done;
            }
            if (won(x, &c)) {
                p->won_serial = serial;
                outcome = P_SOLVED;
                goto done;
            }
            if (lost) {
                p->locked++;
                continue;
            }
            if (enqueue(p, layer_of_state(p, &c), child) < 0) {
                outcome = P_MEMORY;
                goto done;
            }
        }
        size_t bytes = prover_bytes(p);
        if (bytes > (size_t)p->peak_bytes)
            p->peak_bytes = (long long)bytes;
        if (p->max_bytes && bytes > p->max_bytes) {
            outcome = P_MEMORY;
            goto done;
        }
    }
done:
    free(mv);
    if ((outcome == P_SOLVED || outcome == P_EXHAUSTED) && path) {
        x->outcome = outcome;
        if (outcome == P_EXHAUSTED)
            x->used = 8; /* a loss needs no records */
        if (save_proof(p, path, root, root_len) < 0)
            return P_IO;
    }
    return outcome;
}

/* ---- Python binding ---- */

static int read_cards(PyObject *obj, uint8_t *out, Py_ssize_t cap, Py_ssize_t *n, const char *what) {
    char *buf;
    Py_ssize_t len;
    if (PyBytes_AsStringAndSize(obj, &buf, &len) < 0)
        return -1;
    if (len > cap) {
        PyErr_Format(PyExc_ValueError, "%s: %zd cards, at most %zd supported", what, len, cap);
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        if ((uint8_t)buf[i] >= 52) {
            PyErr_Format(PyExc_ValueError, "%s: card code %d out of range", what, (uint8_t)buf[i]);
            return -1;
        }
        out[i] = (uint8_t)buf[i];
    }
    *n = len;
    return 0;
}

/* The start of a search or a proof from the Python arguments into x (columns, talon) and start; 0, or -1 with
 * an exception set. */
static int read_start(PyObject *columns, PyObject *found, PyObject *stock, PyObject *waste, int redeals, int rule,
                      Search *x, St *start) {
    Py_ssize_t ncols = PyTuple_GET_SIZE(columns);
    if (ncols < 1 || ncols > MAXCOLS) {
        PyErr_Format(PyExc_ValueError, "%zd columns, 1..%d supported", ncols, MAXCOLS);
        return -1;
    }
    if (rule < 0 || rule > 2 || redeals < 0 || redeals > 255) {
        PyErr_SetString(PyExc_ValueError, "bad move rule or redeal count");
        return -1;
    }
    x->ncols = (int)ncols;
    for (Py_ssize_t i = 0; i < ncols; i++) {
        PyObject *col = PyTuple_GET_ITEM(columns, i);
        if (!PyBytes_Check(col)) {
            PyErr_SetString(PyExc_TypeError, "columns must be bytes");
            return -1;
        }
        Py_ssize_t n;
        if (read_cards(col, start->col[i], MAXINIT, &n, "column") < 0)
            return -1;
        start->len[i] = (uint8_t)n;
    }
    if (PyBytes_GET_SIZE(found) != 8) {
        PyErr_SetString(PyExc_ValueError, "foundations: 8 slot heights (2 decks) expected");
        return -1;
    }
    for (int i = 0; i < 8; i++) {
        uint8_t h = (uint8_t)PyBytes_AS_STRING(found)[i];
        if (h > 13) {
            PyErr_SetString(PyExc_ValueError, "foundations: a height above 13");
            return -1;
        }
        start->found[i] = h;
    }
    for (int s = 0; s < 4; s++)
        if (start->found[2 * s] > start->found[2 * s + 1]) {
            uint8_t t = start->found[2 * s];
            start->found[2 * s] = start->found[2 * s + 1];
            start->found[2 * s + 1] = t;
        }
    Py_ssize_t ns, nw;
    uint8_t sbuf[TALCAP];
    if (read_cards(waste, x->S, TALCAP, &nw, "waste") < 0 || read_cards(stock, sbuf, TALCAP - nw, &ns, "stock") < 0)
        return -1;
    memcpy(x->S + nw, sbuf, (size_t)ns);
    x->L = (int)(nw + ns);
    x->ml = (x->L + 7) / 8;
    memcpy(start->tal, x->S, (size_t)x->L);
    start->tlen = (uint8_t)x->L;
    start->wlen = (uint8_t)nw;
    start->redeals = (uint8_t)redeals;
    start->dirty = 1;
    x->rule = rule;
    return 0;
}

PyDoc_STRVAR(search_doc,
"search(columns, foundations, stock, waste, redeals, rule, params, lifo, incomplete, locks, autoplay_on,\n"
"       nodes, states, seconds) -> (outcome, moves, nodes, states)\n\n"
"One best-first stage of server.engine.solver.search._search (weight 0), node for node.\n"
"columns: tuple of bytes (card codes bottom to top, no face-down cards); foundations: 8 slot heights\n"
"grouped by suit (state.from_position); stock (next draw first) and waste (bottom to top): bytes;\n"
"rule: 0 single, 1 supermove, 2 sequence; params: (a, b, c, w) score weights; locks: bits, 1 the lock\n"
"check after draws, 2 after every command, 4 the draw-only expansion of a stuck waste top (search.py passes\n"
"5 for locks=True); nodes, states: budgets;\n"
"seconds: wall-clock cap (CLOCK_MONOTONIC) or a negative number for none.\n"
"outcome: 'solved', 'exhausted', 'nodes', 'time', 'states', 'memory' or 'capacity'; moves: the\n"
"command list (with the start's auto-play when autoplay_on is false) for 'solved', else None.\n"
"Raises ValueError for a position outside the supported limits (see the file comment).");

static PyObject *py_search(PyObject *self, PyObject *args) {
    PyObject *columns, *found, *stock, *waste;
    int redeals, rule, a, b, c, w, lifo, incomplete, locks, autoplay_on;
    long long max_nodes, max_states;
    double seconds;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!SSSii(iiii)ppipLLd", &PyTuple_Type, &columns, &found, &stock, &waste, &redeals,
                          &rule, &a, &b, &c, &w, &lifo, &incomplete, &locks, &autoplay_on, &max_nodes, &max_states,
                          &seconds))
        return NULL;
    Search x;
    memset(&x, 0, sizeof x);
    St start;
    memset(&start, 0, sizeof start);
    if (read_start(columns, found, stock, waste, redeals, rule, &x, &start) < 0)
        return NULL;
    x.a = a;
    x.b = b;
    x.c = c;
    x.w = w;
    x.lifo = lifo;
    x.incomplete = incomplete;
    x.locks = locks;
    x.autoplay_on = autoplay_on;
    x.max_nodes = max_nodes;
    x.max_states = max_states;
    x.seconds = seconds;

    Py_BEGIN_ALLOW_THREADS
    run(&x, &start);
    Py_END_ALLOW_THREADS

    if (x.outcome == R_INTERRUPTED) { /* the signal handler's exception is set: raise it */
        release(&x);
        return NULL;
    }
    static const char *names[] = {"solved", "exhausted", "nodes", "time", "states", "memory", "capacity"};
    PyObject *moves = Py_None;
    Py_INCREF(Py_None);
    if (x.outcome == R_SOLVED) {
        Py_DECREF(Py_None);
        moves = PyList_New(x.nmoves);
        if (!moves) {
            release(&x);
            return NULL;
        }
        size_t off = 0;
        for (int i = 0; i < x.nmoves; i++) {
            PyObject *t = PyUnicode_FromString(x.text + off);
            if (!t) {
                Py_DECREF(moves);
                release(&x);
                return NULL;
            }
            PyList_SET_ITEM(moves, i, t);
            off += strlen(x.text + off) + 1;
        }
    }
    release(&x);
    return Py_BuildValue("(sNLLLL)", names[x.outcome], moves, x.nodes, x.states, x.dominated, x.draw_only);
}

PyDoc_STRVAR(prove_doc,
"prove(columns, foundations, stock, waste, redeals, rule, autoplay_on, nodes, seconds, max_mb, path,\n"
"      checkpoint_seconds, report_seconds, lock_all) -> (outcome, moves, counts)\n\n"
"The layered exact prover of server.engine.solver.prover, in C (the same states expanded).\n"
"columns, foundations, stock, waste, redeals, rule: as for search(). nodes: states this run may expand (-1: no\n"
"cap); seconds: wall-clock seconds of this run (-1: no cap); both checked at layer boundaries. max_mb: memory cap\n"
"of the search's storage in MiB (0: none); past it the run stops mid-layer and the work since the last\n"
"checkpoint is lost. path: the proof file (str), resumed when it exists and written at every stop at a layer\n"
"boundary, at a verdict and every checkpoint_seconds (-1: only then); its links file is path + '.links'.\n"
"None: nothing written (the links in a temporary file). report_seconds: a progress line on stderr at a layer\n"
"boundary at most this often (-1: none). lock_all: the lock check on every new state, not only after draws.\n"
"outcome: 'solved', 'exhausted', 'nodes', 'time', 'memory', 'capacity' or 'io'; moves: the command list for\n"
"'solved' (with the start's auto-play when autoplay_on is false), else None; counts: dict of nodes, run_nodes\n"
"(this run's), states,\n"
"locked, draw_only, layers, largest_layer, largest_key (redeals used, drawn in the pass, cards up),\n"
"most_pending, peak_mb.\n"
"Raises ValueError for a position outside the supported limits, a proof file of another input or a damaged one\n"
"(its length, checksum or a record wrong, or its links file shorter than its states), all left as they are;\n"
"OSError when a file cannot be opened.");

static PyObject *py_prove(PyObject *self, PyObject *args) {
    PyObject *columns, *found, *stock, *waste, *path_obj;
    int redeals, rule, autoplay_on, lock_all;
    long long max_nodes, max_mb;
    double seconds, checkpoint_s, report_s;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!SSSiipLdLOddp", &PyTuple_Type, &columns, &found, &stock, &waste, &redeals, &rule,
                          &autoplay_on, &max_nodes, &seconds, &max_mb, &path_obj, &checkpoint_s, &report_s,
                          &lock_all))
        return NULL;
    Prover p;
    memset(&p, 0, sizeof p);
    St start;
    memset(&start, 0, sizeof start);
    if (read_start(columns, found, stock, waste, redeals, rule, &p.x, &start) < 0)
        return NULL;
    p.x.locks = LOCKS_DRAWS | LOCKS_STUCK | LOCKS_INERT | (lock_all ? LOCKS_ALL : 0);
    p.x.autoplay_on = autoplay_on;
    p.r0 = redeals;
    p.ns0 = (int)(start.tlen - start.wlen);
    p.max_bytes = max_mb > 0 ? (size_t)max_mb << 20 : 0;
    p.report_s = report_s;
    p.current = NO_LAYER;
    p.won_serial = -1;
    const char *path = NULL;
    char links_path[4200];
    if (path_obj != Py_None) {
        path = PyUnicode_AsUTF8(path_obj);
        if (!path)
            return NULL;
        if (snprintf(links_path, sizeof links_path, "%s.links", path) >= (int)sizeof links_path) {
            PyErr_SetString(PyExc_ValueError, "path too long");
            return NULL;
        }
    }
    int resumed = 0;
    if (path) {
        FILE *f = fopen(path, "rb");
        if (f) {
            /* the root's key identifies the input */
            St first;
            uint8_t order[MAXCOLS], root[KEYCAP];
            int root_len = root_key(&p.x, &start, &first, order, root);
            int got = load_proof(&p, f, root, root_len);
            fclose(f);
            if (got <= 0) {
                release_prover(&p);
                if (got == 0)
                    PyErr_SetString(PyExc_ValueError, "the proof file is of another input: left as it is");
                else if (got == -2)
                    PyErr_SetString(PyExc_ValueError, "the file is no proof file of this format: left as it is");
                else if (got == -3)
                    PyErr_SetString(PyExc_ValueError, "the proof file is damaged (its length, checksum or a record "
                                                      "wrong): left as it is");
                else
                    PyErr_SetString(PyExc_OSError, "the proof file could not be read (damaged or no memory)");
                return NULL;
            }
            resumed = 1;
        }
        p.links = fopen(links_path, resumed ? "r+b" : "w+b");
        if (p.links && resumed) {
            /* the checkpoint's links are there (a shorter file, extended with zeros, would trace garbage); past
             * them, those of work after the checkpoint, searched again */
            off_t have = fseeko(p.links, 0, SEEK_END) == 0 ? ftello(p.links) : -1;
            if (have >= 0 && have < (off_t)p.serial * 8) {
                fclose(p.links);
                release_prover(&p);
                PyErr_Format(PyExc_ValueError, "the links file %s holds %lld of the proof's %lld states: damaged",
                             links_path, (long long)(have / 8), p.serial);
                return NULL;
            }
            if (have < 0 || ftruncate(fileno(p.links), (off_t)p.serial * 8) != 0
                || fseeko(p.links, 0, SEEK_END) != 0) {
                fclose(p.links);
                p.links = NULL;
            }
        }
    } else {
        p.links = tmpfile();
    }
    if (!p.links) {
        release_prover(&p);
        PyErr_SetFromErrnoWithFilename(PyExc_OSError, path ? links_path : NULL);
        return NULL;
    }
    int outcome;
    Py_BEGIN_ALLOW_THREADS
    outcome = prove_run(&p, &start, max_nodes, seconds, checkpoint_s, path, resumed);
    if (outcome == P_SOLVED && prover_solution(&p, &start) < 0)
        outcome = P_IO;
    Py_END_ALLOW_THREADS
    fclose(p.links);
    if (outcome == P_INTERRUPTED) {
        release_prover(&p);
        return NULL;
    }
    static const char *names[] = {"solved", "exhausted", "nodes", "time", "memory", "capacity", "io"};
    PyObject *moves = Py_None;
    Py_INCREF(Py_None);
    if (outcome == P_SOLVED) {
        Py_DECREF(Py_None);
        moves = PyList_New(p.x.nmoves);
        size_t off = 0;
        for (int i = 0; moves && i < p.x.nmoves; i++) {
            PyObject *t = PyUnicode_FromString(p.x.text + off);
            if (!t) {
                Py_CLEAR(moves);
                break;
            }
            PyList_SET_ITEM(moves, i, t);
            off += strlen(p.x.text + off) + 1;
        }
        if (!moves) {
            release_prover(&p);
            return NULL;
        }
    }
    release_prover(&p);
    uint32_t k = p.largest_key;
    return Py_BuildValue("(sN{sLsLsLsLsLsLsLs(iii)sLsL})", names[outcome], moves, "nodes", p.x.nodes,
                         "run_nodes", p.x.nodes - p.nodes0, "states", p.serial, "locked", p.locked, "draw_only",
                         p.x.draw_only, "layers", p.layers,
                         "largest_layer", p.largest_layer, "largest_key", (int)(k >> 16), (int)((k >> 8) & 255),
                         (int)(k & 255), "most_pending", p.most_pending, "peak_mb", p.peak_bytes >> 20);
}

static PyMethodDef methods[] = {
    {"search", py_search, METH_VARARGS, search_doc},
    {"prove", py_prove, METH_VARARGS, prove_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_csolver",
    "Optional C accelerator of the solver's best-first stage (server/engine/solver/search.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csolver(void) {
    PyObject *m = PyModule_Create(&module);
    /* where a proof file's records begin (proof_file.waiting reads them) */
    if (m && PyModule_AddIntConstant(m, "PROOF_HEAD_SIZE", (long)sizeof(ProofHead)) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
