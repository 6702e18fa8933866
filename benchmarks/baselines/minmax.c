#include <stdint.h>

static const uint32_t lines[10] = {
    0x000F, 0x00F0, 0x0F00, 0xF000,     /* rows */
    0x1111, 0x2222, 0x4444, 0x8888,     /* columns */
    0x8421, 0x1248,                     /* diagonals */
};
static int64_t outcomes[3];            /* X wins, O wins, draws */

void minmax_reset(void) { outcomes[0] = outcomes[1] = outcomes[2] = 0; }
int64_t minmax_count(int outcome) { return outcomes[outcome]; }

void minmax(uint32_t x, uint32_t o, int x_moves)
{
    uint32_t last = x_moves ? o : x;   /* the player who just moved */
    for (int k = 0; k < 10; k++)
        if ((last & lines[k]) == lines[k]) {
            outcomes[x_moves ? 1 : 0]++;
            return;
        }
    uint32_t empty = ~(x | o) & 0xFFFFu;
    if (!empty) {
        outcomes[2]++;
        return;
    }
    while (empty) {
        uint32_t bit = empty & -empty;
        empty ^= bit;
        if (x_moves)
            minmax(x | bit, o, 0);
        else
            minmax(x, o | bit, 1);
    }
}
