//! Self-tests: graphExecute answering EARLY_TERMINATION (LPAI's "output not ready, execute again").

use super::fake::{self, GraphId, Settings};
use crate::platform::{Current, Platform};
use crate::runtime::graph::MAX_EXECUTE_ATTEMPTS;
use crate::runtime::RuntimeError;

const G0: GraphId = GraphId { context: 0, graph: 0 };

crate::self_tests! {
    fn early_termination_is_repeated_until_the_graph_completes() {
        let session = fake::begin(Settings { early_terminations: 3, ..Settings::LPAI });
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        expect_ok!(graph.write_input(0, &[0, 100, 200, 255]));
        let execution = expect_ok!(graph.execute());
        check!(execution.attempts == 4);
        check!(expect_some!(graph.output_bytes(0)) == [1, 101, 201, 255]);
        let again = expect_ok!(graph.execute());
        check!(again.attempts == 1);
        session.configure(|settings| settings.early_terminations = 1);
        check!(expect_ok!(graph.execute()).attempts == 2);
        let record = session.record();
        let counted = expect_some!(record.graph(G0));
        check!(counted.execute_calls == 4 + 1 + 2 && counted.completed == 3);
        // LPAI's I/O dataSize is padded to the size alignment (64) though the tensors hold 4 bytes.
        check!(counted.data_sizes == (64, 64));
    }

    fn a_graph_that_never_completes_is_given_up() {
        let session = fake::begin(Settings { always_early: true, ..Settings::LPAI });
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let result = graph.execute();
        check!(result == Err(RuntimeError::NeverCompleted { attempts: MAX_EXECUTE_ATTEMPTS }));
        let record = session.record();
        let counted = expect_some!(record.graph(G0));
        check!(counted.execute_calls == MAX_EXECUTE_ATTEMPTS && counted.completed == 0);
        session.configure(|settings| settings.always_early = false);
        check!(expect_ok!(graph.execute()).attempts == 1);
    }

    fn started_frames_that_never_complete_are_given_up_after_as_many_executions() {
        let session = fake::begin(Settings { always_early: true, ..Settings::LPAI });
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let started = Current::now_ticks();
        // SAFETY: the fake has no graphExecuteAsync, so every frame runs inside the call; the context is dropped, not
        // leaked, before the arena it stands on.
        expect_ok!(unsafe { graph.start_frame(None) });
        // SAFETY: as above.
        let result = unsafe { graph.wait_frame_repeating(started) };
        check!(result == Err(RuntimeError::NeverCompleted { attempts: MAX_EXECUTE_ATTEMPTS }));
        check!(!graph.frame_in_flight());
        // As many executions as `execute` makes, none started past the limit and thrown away.
        let record = session.record();
        check!(expect_some!(record.graph(G0)).execute_calls == MAX_EXECUTE_ATTEMPTS);
    }

    fn a_streaming_caller_feeds_a_frame_per_early_termination() {
        let session = fake::begin(Settings { early_terminations: 2, ..Settings::LPAI });
        load_one_graph!(context);
        let graph = expect_some!(context.graph_mut(0));
        let frames: [[u8; 4]; 3] = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]];
        let mut answers = [false; 3];
        for (frame, answer) in frames.iter().zip(answers.iter_mut()) {
            expect_ok!(graph.write_input(0, frame));
            *answer = expect_ok!(graph.execute_frame()).is_some();
        }
        check!(answers == [false, false, true]);
        check!(expect_some!(graph.output_bytes(0)) == [10, 11, 12, 13]);
        let record = session.record();
        check!(expect_some!(record.graph(G0)).execute_calls == 3);
    }
}
