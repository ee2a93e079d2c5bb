/* Detection-cost guest (docs/performance.md, "Where the time goes now"):
 * a Barnes-Hut-style n-body step in the shape of SPLASH-2's BARNES, built
 * with plain gcc for binary mode.
 *
 * usage: nbody_tree [BODIES [STEPS]]   (defaults: 4000 bodies, 3 steps)
 *
 * Four threads take bodies from a shared counter under a mutex and compute
 * each body's force by a recursive walk of a quadtree that one thread
 * rebuilds between steps (barriers): non-inlined recursive calls make about
 * half of the program's accesses frame accesses (push/pop/call/ret), the
 * tree nodes are read by every thread (FastTrack's read-shared state), and
 * each body costs three lock/unlock pairs. Race-free; the printed energy is
 * a checksum. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NT 4
typedef struct node {
    double cx, cy, m, size, x0, y0;
    struct node *kid[4];
    int body;
} node;

static int n = 4000, steps = 3;
static double *px, *py, *vx, *vy, *ms;
static node *pool;
static int npool;
static node *root;
static pthread_mutex_t work_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t *body_lock;
static pthread_barrier_t bar;
static int next_body;
static double energy;
static pthread_mutex_t energy_lock = PTHREAD_MUTEX_INITIALIZER;

static node *newnode(double x0, double y0, double size)
{
    node *q = &pool[npool++];
    q->x0 = x0; q->y0 = y0; q->size = size; q->m = 0; q->cx = q->cy = 0;
    q->kid[0] = q->kid[1] = q->kid[2] = q->kid[3] = 0;
    q->body = -1;
    return q;
}

__attribute__((noinline)) static int quad(node *q, double x, double y)
{
    double h = q->size / 2;
    return (x >= q->x0 + h) + 2 * (y >= q->y0 + h);
}

__attribute__((noinline)) static void insert(node *q, int b, int depth)
{
    if (q->body < 0 && q->m == 0 && !q->kid[0] && !q->kid[1] && !q->kid[2] && !q->kid[3]) {
        q->body = b; q->m = ms[b]; q->cx = px[b]; q->cy = py[b];
        return;
    }
    if (depth > 40) { q->m += ms[b]; return; }
    if (q->body >= 0) {
        int o = q->body; q->body = -1;
        int k = quad(q, px[o], py[o]);
        double h = q->size / 2;
        if (!q->kid[k]) q->kid[k] = newnode(q->x0 + (k & 1) * h, q->y0 + (k >> 1) * h, h);
        insert(q->kid[k], o, depth + 1);
    }
    int k = quad(q, px[b], py[b]);
    double h = q->size / 2;
    if (!q->kid[k]) q->kid[k] = newnode(q->x0 + (k & 1) * h, q->y0 + (k >> 1) * h, h);
    insert(q->kid[k], b, depth + 1);
    q->m += ms[b];
}

__attribute__((noinline)) static void summarize(node *q)
{
    if (q->body >= 0) return;
    double m = 0, cx = 0, cy = 0;
    for (int i = 0; i < 4; i++) if (q->kid[i]) {
        summarize(q->kid[i]);
        m += q->kid[i]->m; cx += q->kid[i]->cx * q->kid[i]->m; cy += q->kid[i]->cy * q->kid[i]->m;
    }
    if (m > 0) { q->m = m; q->cx = cx / m; q->cy = cy / m; }
}

__attribute__((noinline)) static void force(const node *q, int b, double *ax, double *ay)
{
    if (!q || q->m == 0 || q->body == b) return;
    double dx = q->cx - px[b], dy = q->cy - py[b];
    double d2 = dx * dx + dy * dy + 1e-4;
    if (q->body >= 0 || q->size * q->size < 0.25 * d2) {
        double inv = q->m / (d2 * sqrt(d2));
        *ax += dx * inv; *ay += dy * inv;
        return;
    }
    for (int i = 0; i < 4; i++) force(q->kid[i], b, ax, ay);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int s = 0; s < steps; s++) {
        for (;;) {
            pthread_mutex_lock(&work_lock);
            int b = next_body++;
            pthread_mutex_unlock(&work_lock);
            if (b >= n) break;
            double ax = 0, ay = 0;
            force(root, b, &ax, &ay);
            pthread_mutex_lock(&body_lock[b]);
            vx[b] += ax * 1e-3; vy[b] += ay * 1e-3;
            pthread_mutex_unlock(&body_lock[b]);
            pthread_mutex_lock(&energy_lock);
            energy += ax * ax + ay * ay;
            pthread_mutex_unlock(&energy_lock);
        }
        if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD) {
            for (int b = 0; b < n; b++) { px[b] += vx[b] * 1e-3; py[b] += vy[b] * 1e-3; }
            npool = 0; root = newnode(-2, -2, 4);
            for (int b = 0; b < n; b++) insert(root, b, 0);
            summarize(root);
            next_body = 0;
        }
        pthread_barrier_wait(&bar);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) n = atoi(argv[1]);
    if (argc > 2) steps = atoi(argv[2]);
    px = malloc(n * sizeof *px); py = malloc(n * sizeof *py);
    vx = calloc(n, sizeof *vx); vy = calloc(n, sizeof *vy); ms = malloc(n * sizeof *ms);
    body_lock = malloc(n * sizeof *body_lock);
    pool = malloc(8 * (size_t)n * sizeof *pool + 1000 * sizeof *pool);
    unsigned r = 12345;
    for (int i = 0; i < n; i++) {
        r = r * 1103515245 + 12345; px[i] = (r >> 8) / 16777216.0 * 2 - 1;
        r = r * 1103515245 + 12345; py[i] = (r >> 8) / 16777216.0 * 2 - 1;
        ms[i] = 1.0 / n;
        pthread_mutex_init(&body_lock[i], 0);
    }
    root = newnode(-2, -2, 4);
    for (int b = 0; b < n; b++) insert(root, b, 0);
    summarize(root);
    pthread_barrier_init(&bar, 0, NT);
    pthread_t t[NT];
    for (int i = 0; i < NT; i++) pthread_create(&t[i], 0, worker, 0);
    for (int i = 0; i < NT; i++) pthread_join(t[i], 0);
    printf("energy %.6e x0 %.6f\n", energy, px[0]);
    return 0;
}
