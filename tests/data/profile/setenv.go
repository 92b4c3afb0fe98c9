// The start-up of a container runtime in miniature: 5,000 environment
// variables handed to a program it execs, either set one by one with
// os.Setenv first ("setenv": every call copies into the runtime's
// environment map and the C environment) or passed to exec as they are
// ("direct"). Both exec /bin/true with the same environment; with a
// second argument "exit" they exit where they would exec (a simulator
// that drops a process image's counts at exec still sees the work).
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	if len(os.Args) != 2 && (len(os.Args) != 3 || os.Args[2] != "exit") {
		fmt.Fprintln(os.Stderr, "usage: setenv setenv|direct [exit]")
		os.Exit(2)
	}
	env := make([]string, 0, 5000)
	for i := 0; i < 5000; i++ {
		env = append(env, fmt.Sprintf("CMDSCOPE_VAR_%d=value-%d", i, i))
	}
	switch os.Args[1] {
	case "setenv":
		os.Clearenv()
		for i := 0; i < 5000; i++ {
			os.Setenv(fmt.Sprintf("CMDSCOPE_VAR_%d", i), fmt.Sprintf("value-%d", i))
		}
		env = os.Environ()
	case "direct":
	default:
		os.Exit(2)
	}
	if len(os.Args) == 3 {
		// 0 when the environment is the one it would hand to exec.
		os.Exit(len(env) - 5000)
	}
	err := syscall.Exec("/bin/true", []string{"true"}, env)
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}
