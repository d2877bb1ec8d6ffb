//! Several threads drive their own sessions on the contract model (a model of the documented LPAI contract, not
//! the vendor library) at once, as the skel's sessions may: every answer and every output stays exact.

mod common;

use common::*;

#[test]
fn sessions_on_several_threads_stay_exact() {
    let bytes = file(&SINGLE, 48);
    let workers: Vec<_> = (0..4u8)
        .map(|worker| {
            let bytes = bytes.clone();
            std::thread::spawn(move || {
                for round in 0..25u8 {
                    let mut session = Session::open(&bytes);
                    for call in 0..3u8 {
                        let value = worker.wrapping_mul(31).wrapping_add(round).wrapping_add(call);
                        session.input_mut(0).fill(value);
                        assert_eq!(session.execute(), 0);
                        // out = (x * 3 - 40 + frame * 5) >> 2, clamped to u8
                        let want = ((i64::from(value) * 3 - 40 + i64::from(call) * 5) >> 2).clamp(0, 255) as u8;
                        assert_eq!(&session.output(0)[..16], &[want; 16], "worker {worker} round {round} call {call}");
                    }
                    assert_eq!(session.free(), 0);
                }
                lpai_contract_model::take_log_lines()
            })
        })
        .collect();
    for worker in workers {
        let lines = worker.join().unwrap();
        assert!(lines.is_empty(), "{lines:?}");
    }
}
