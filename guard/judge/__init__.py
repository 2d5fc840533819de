"""One turn judged, in stages: the guard object, the one way in (``pipeline``: ``load_guard``, ``Guard.judge``), the
detector that plans every pair (``planning``), scores them and builds each verdict (``building``, ``verdicts``), the
policies that choose a reply (``policies``, ``reminders``), and the finished report (``report``), its wording
(``wording``) and its one JSON form (``jsonform``)."""
