/* Spends its time in the kernel: many small writes to /dev/null. */
#include <fcntl.h>
#include <unistd.h>

int main(void)
{
    int fd = open("/dev/null", O_WRONLY);
    char c = 'x';
    for (int i = 0; i < 300000; i++)
        if (write(fd, &c, 1) != 1)
            return 1;
    return 0;
}
