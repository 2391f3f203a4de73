//! Placeholder: being written (see helper task).
