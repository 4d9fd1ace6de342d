/* Plans its own timing from C: a constructor takes the interpreter's lock through the Python C API (the
   runner is a Python process) and replaces the runner's block timer so it claims a second a call while the
   judge calibrates and a tenth of the real time after. Its real work is honest but slow. The judge must
   plan from its own clock and catch the later claims. */
#include <math.h>

extern int PyGILState_Ensure(void);
extern void PyGILState_Release(int);
extern int PyRun_SimpleString(const char *);

__attribute__((constructor)) static void take_over_the_timer(void)
{
    int state = PyGILState_Ensure();
    PyRun_SimpleString(
        "import sys\n"
        "t = sys.modules.get('engine.wire.timing')\n"
        "if t is not None:\n"
        "    real = t.measure\n"
        "    seen = []\n"
        "    def measure(fns, policy, device, *a, **k):\n"
        "        s = real(fns, policy, device, *a, **k)\n"
        "        seen.append(1)\n"
        "        for v in s.values():\n"
        "            v.times_us = [1e6] * len(v.times_us) if len(seen) <= 2 else [x * 0.1 for x in v.times_us]\n"
        "        return s\n"
        "    t.measure = measure\n");
    PyGILState_Release(state);
}

void kernel_scale(int n, float alpha, const float *x, float *y)
{
    for (int i = 0; i < n; i++) {
        float v = x[i], w = 0.0f;
        for (int r = 0; r < 64; r++) w += sinf(v + (float)r) * 1e-30f;
        y[i] = alpha * v + 1.0f + w;
    }
}
