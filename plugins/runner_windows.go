//go:build windows

package plugins

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a plugin runs in a Job Object of its own, created with
// JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE: only the host holds the job's handle, so when the host
// ends, however it ends, the system closes the handle and ends every process in the job, the
// plugin's children included (they join their parent's job). Handles name processes, not
// reusable ids, so no kill can reach a stranger.
type osGuard struct {
	job windows.Handle
}

func (r *procRunner) launch() error {
	job, err := killOnCloseJob()
	if err != nil {
		return fmt.Errorf("plugin job object: %w", err)
	}
	if err := r.cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return err
	}
	r.pid = r.cmd.Process.Pid
	// os.StartProcess cannot start a process suspended and resume it, so the process joins
	// the job just after it starts: a child it creates in that first instant is outside it.
	if err := assign(job, r.pid); err != nil {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
		windows.CloseHandle(job)
		return fmt.Errorf("plugin job object: assign process %d: %w", r.pid, err)
	}
	r.guard.job = job
	r.register()
	go r.reap()
	return nil
}

// killOnCloseJob creates a job that kills its processes when its last handle closes.
func killOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

func assign(job windows.Handle, pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return windows.AssignProcessToJobObject(job, h)
}

// reap waits for the plugin to exit, ends what is left in its job, then closes the job.
func (r *procRunner) reap() {
	err := r.cmd.Wait()
	r.reapCommands() // none on Windows (commands run in job objects), kept for one code path
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = windows.TerminateJobObject(r.guard.job, 1)
	windows.CloseHandle(r.guard.job)
	r.waitErr = err
	r.unregister()
	close(r.done)
}

// killGroup ends every process in the plugin's job.
func (r *procRunner) killGroup() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exited() || r.guard.job == 0 {
		return
	}
	_ = windows.TerminateJobObject(r.guard.job, 1)
}
