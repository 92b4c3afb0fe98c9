// Fills a std::map at -O2: operator[], the tree walk and the node
// allocation are inlined into work::fill, whose own code is the little
// random number generator around them.
#include <cstdio>
#include <cstdlib>
#include <map>

namespace work {
__attribute__((noinline)) long fill(int n)
{
    std::map<int, long> m;
    unsigned x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        m[static_cast<int>((x >> 4) % (4u * n))] += i;
    }
    long s = 0;
    for (const auto &kv : m)
        s += kv.second;
    return s;
}
} // namespace work

int main(int argc, char **argv)
{
    int n = argc > 1 ? std::atoi(argv[1]) : 200000;
    long s = 0;
    for (int r = 0; r < 2; r++)
        s += work::fill(n);
    std::printf("%ld\n", s);
    return 0;
}
